package dnsresolver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/ports"
)

// DefaultTimeout bounds one lookup when Config.Timeout is zero.
const DefaultTimeout = 5 * time.Second

// Config says which nameserver to ask and how long to wait.
type Config struct {
	// Nameserver is "host:port" (or an IP address, port 53) of the one
	// nameserver to ask; empty asks the system's, from /etc/resolv.conf.
	Nameserver string
	// Timeout bounds each lookup, retries and the TCP fallback included
	// (DefaultTimeout when zero).
	Timeout time.Duration
}

// Resolver looks up verification records. It is safe for concurrent use.
//
// TXT records are read through net.Resolver (the pure-Go resolver, with
// Dial pointed at the configured nameserver). A CNAME is read with a query
// of type CNAME sent by this package over the same dialer: net.Resolver's
// LookupCNAME asks for A, AAAA and CNAME at once and answers with whichever
// reply it reads first, which for a chain of aliases is sometimes the first
// target and sometimes the canonical name at the end of the chain, and it
// answers "no such host" when the alias points at a name without addresses.
type Resolver struct {
	nameserver string // "" for the system's
	timeout    time.Duration
	dialer     net.Dialer
	r          *net.Resolver
}

var _ ports.DNSResolver = (*Resolver)(nil)

// New returns a resolver for c, or an error naming what is wrong with
// c.Nameserver.
func New(c Config) (*Resolver, error) {
	ns, err := ParseNameserver(c.Nameserver)
	if err != nil {
		return nil, err
	}
	r := &Resolver{nameserver: ns, timeout: c.Timeout}
	if r.timeout <= 0 {
		r.timeout = DefaultTimeout
	}
	r.r = &net.Resolver{PreferGo: true, StrictErrors: true, Dial: r.dial}
	return r, nil
}

// ParseNameserver checks a nameserver setting and returns it as host:port:
// "" stays "" (the system's nameservers), an IP address gets port 53.
func ParseNameserver(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return netip.AddrPortFrom(a, 53).String(), nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" || strings.ContainsAny(host, " /") {
		return "", errors.New("must be host:port or an IP address, such as 127.0.0.1:53")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", errors.New("must have a port from 1 to 65535")
	}
	return net.JoinHostPort(host, port), nil
}

// dial connects to the configured nameserver, whatever server the system
// configuration named, with the transport the resolver asks for ("udp",
// then "tcp" when the answer was truncated).
func (r *Resolver) dial(ctx context.Context, network, address string) (net.Conn, error) {
	if r.nameserver != "" {
		address = r.nameserver
	}
	return r.dialer.DialContext(ctx, network, address)
}

// fqdn returns name with exactly one trailing dot, so the resolver never
// appends the search domains of /etc/resolv.conf.
func fqdn(name string) string { return strings.TrimSuffix(name, ".") + "." }

// LookupTXT implements ports.DNSResolver: the TXT strings at name, each
// record's strings joined. A name that does not exist or has no TXT record
// answers nothing and no error; SERVFAIL, a refusal or a timeout is an error.
func (r *Resolver) LookupTXT(ctx context.Context, name string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	txts, err := r.r.LookupTXT(ctx, fqdn(name))
	if err != nil {
		if dnsErr, ok := errors.AsType[*net.DNSError](err); ok && dnsErr.IsNotFound {
			return nil, nil
		}
		return nil, fmt.Errorf("dnsresolver: TXT %s: %w", name, err)
	}
	return txts, nil
}

// LookupCNAME implements ports.DNSResolver: the target of the CNAME record
// at name itself (the first hop of a chain, not its end), lower-cased and
// without the trailing dot, or "" when name has no CNAME record or does not
// exist. The first hop is what the owner of name publishes, and the target
// a service asks for is often itself an alias (of a load balancer), so the
// end of the chain would never equal it. The target need not resolve to
// any address.
func (r *Resolver) LookupCNAME(ctx context.Context, name string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	servers := []string{r.nameserver}
	if r.nameserver == "" {
		servers = systemNameservers()
	}
	var lastErr error
	for _, server := range servers {
		target, err := r.queryCNAME(ctx, server, fqdn(name))
		if err == nil {
			return target, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return "", fmt.Errorf("dnsresolver: CNAME %s: %w", name, lastErr)
}
