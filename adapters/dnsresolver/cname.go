package dnsresolver

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// ednsSize is the UDP payload size advertised, the size DNS Flag Day 2020
// recommends (and Go's resolver advertises).
const ednsSize = 1232

// queryCNAME asks server for the CNAME record at name (a fully qualified
// name) over UDP, and over TCP when the answer is truncated. NXDOMAIN and
// an answer without a CNAME at name answer "".
func (r *Resolver) queryCNAME(ctx context.Context, server, name string) (string, error) {
	qname, err := dnsmessage.NewName(name)
	if err != nil {
		return "", nil // not a name DNS can hold, so it holds no CNAME
	}
	q := dnsmessage.Question{Name: qname, Type: dnsmessage.TypeCNAME, Class: dnsmessage.ClassINET}
	// The ID is what stops an off-path attacker's forged answer, so it comes
	// from crypto/rand (whose Read never fails), not from math/rand.
	var idb [2]byte
	_, _ = rand.Read(idb[:])
	id := binary.BigEndian.Uint16(idb[:])
	msg := dnsmessage.Message{Header: dnsmessage.Header{ID: id, RecursionDesired: true}, Questions: []dnsmessage.Question{q}}
	var opt dnsmessage.Resource
	if err := opt.Header.SetEDNS0(ednsSize, dnsmessage.RCodeSuccess, false); err != nil {
		return "", err
	}
	opt.Body = &dnsmessage.OPTResource{}
	msg.Additionals = []dnsmessage.Resource{opt}
	query, err := msg.Pack()
	if err != nil {
		return "", err
	}
	var p dnsmessage.Parser
	var h dnsmessage.Header
	for _, network := range []string{"udp", "tcp"} {
		if p, h, err = r.exchange(ctx, network, server, query, id, q); err != nil {
			return "", err
		}
		if !h.Truncated {
			break
		}
	}
	if h.Truncated {
		return "", fmt.Errorf("truncated answer over TCP from %s", server)
	}
	switch h.RCode {
	case dnsmessage.RCodeSuccess:
	case dnsmessage.RCodeNameError:
		return "", nil
	default:
		return "", fmt.Errorf("%s from %s", strings.TrimPrefix(h.RCode.String(), "RCode"), server)
	}
	for {
		ah, err := p.AnswerHeader()
		if errors.Is(err, dnsmessage.ErrSectionDone) {
			return "", nil
		}
		if err != nil {
			return "", fmt.Errorf("malformed answer from %s: %w", server, err)
		}
		if ah.Type != dnsmessage.TypeCNAME || !strings.EqualFold(ah.Name.String(), name) {
			if err := p.SkipAnswer(); err != nil {
				return "", fmt.Errorf("malformed answer from %s: %w", server, err)
			}
			continue
		}
		c, err := p.CNAMEResource()
		if err != nil {
			return "", fmt.Errorf("malformed answer from %s: %w", server, err)
		}
		return strings.ToLower(strings.TrimSuffix(c.CNAME.String(), ".")), nil
	}
}

// exchange sends query to server over network and returns the parser
// positioned at the answers of the reply to it, and the reply's header.
// Replies with another id or question are ignored, as Go's resolver
// ignores them, so a spoofed datagram cannot answer the query.
func (r *Resolver) exchange(ctx context.Context, network, server string, query []byte, id uint16, q dnsmessage.Question) (dnsmessage.Parser, dnsmessage.Header, error) {
	c, err := r.dialer.DialContext(ctx, network, server)
	if err != nil {
		return dnsmessage.Parser{}, dnsmessage.Header{}, err
	}
	defer c.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if network == "tcp" { // RFC 1035 §4.2.2: a two-byte length first
		query = append(binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(query)), uint16(len(query))), query...) // #nosec G115 -- one question (a name of at most 255 octets) and one OPT record: far below 65535 octets
	}
	if _, err := c.Write(query); err != nil {
		return dnsmessage.Parser{}, dnsmessage.Header{}, err
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := readReply(c, network, buf)
		if err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			return dnsmessage.Parser{}, dnsmessage.Header{}, err
		}
		var p dnsmessage.Parser
		h, err := p.Start(buf[:n])
		if err != nil || h.ID != id || !h.Response {
			if network == "tcp" {
				return dnsmessage.Parser{}, dnsmessage.Header{}, errors.New("malformed reply over TCP")
			}
			continue
		}
		got, err := p.Question()
		if err != nil || got.Type != q.Type || got.Class != q.Class || !strings.EqualFold(got.Name.String(), q.Name.String()) {
			if network == "tcp" {
				return dnsmessage.Parser{}, dnsmessage.Header{}, errors.New("reply to another question over TCP")
			}
			continue
		}
		if err := p.SkipAllQuestions(); err != nil {
			return dnsmessage.Parser{}, dnsmessage.Header{}, err
		}
		return p, h, nil
	}
}

// readReply reads one message: one datagram over UDP, or one
// length-prefixed message over TCP.
func readReply(c net.Conn, network string, buf []byte) (int, error) {
	if network != "tcp" {
		return c.Read(buf)
	}
	if _, err := io.ReadFull(c, buf[:2]); err != nil {
		return 0, err
	}
	n := int(binary.BigEndian.Uint16(buf[:2]))
	if _, err := io.ReadFull(c, buf[:n]); err != nil {
		return 0, err
	}
	return n, nil
}

// resolvConf is the system's resolver configuration.
const resolvConf = "/etc/resolv.conf"

// systemNameservers returns the nameservers of /etc/resolv.conf.
func systemNameservers() []string { return nameserversFrom(resolvConf) }

// nameserversFrom returns the nameservers of the resolv.conf file at path
// as host:port, or the local server (127.0.0.1 and ::1, port 53) when it
// names none or cannot be read, as Go's resolver does.
func nameserversFrom(path string) []string {
	var out []string
	if f, err := os.Open(path); err == nil { // #nosec G304 -- path is the constant resolvConf, or a test's file
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 2 || fields[0] != "nameserver" {
				continue
			}
			if a, err := netip.ParseAddr(fields[1]); err == nil {
				out = append(out, netip.AddrPortFrom(a, 53).String())
			}
		}
	}
	if len(out) == 0 {
		out = []string{"127.0.0.1:53", "[::1]:53"}
	}
	return out
}
