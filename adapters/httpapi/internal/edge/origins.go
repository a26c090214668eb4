package edge

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// Origins is the list of trusted Origins: the base URL's and the configured
// ones, compared exactly (scheme, host and port).
type Origins struct {
	base string
	list map[string]bool
}

func newOrigins(base string, trusted []string) *Origins {
	o := &Origins{base: base, list: map[string]bool{strings.ToLower(base): true}}
	for _, t := range trusted {
		o.list[strings.ToLower(strings.TrimRight(t, "/"))] = true
	}
	return o
}

// trusted reports whether origin (scheme://host[:port]) is on the list.
func (o *Origins) trusted(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return false
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	return o.list[strings.ToLower(u.Scheme+"://"+u.Host)]
}

// SafeTarget reports whether a callback or redirect URL may be sent to: a
// relative path on this service (one leading slash, no backslash, no control
// characters, no encoded slash or backslash in the path), or an absolute http(s) URL on a
// trusted origin. javascript:, data: and protocol-relative URLs never are.
func (o *Origins) SafeTarget(raw string) bool {
	if raw == "" || len(raw) > 2048 {
		return false
	}
	for _, r := range raw {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return false
		}
	}
	// An encoded slash or backslash in the path could turn into "//host";
	// in the query it is ordinary (an authorization request's redirect_uri).
	path, _, _ := strings.Cut(raw, "?")
	path, _, _ = strings.Cut(path, "#")
	if lower := strings.ToLower(path); strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") {
		return false
	}
	if strings.HasPrefix(raw, "/") {
		if strings.HasPrefix(raw, "//") {
			return false
		}
		u, err := url.Parse(raw)
		return err == nil && u.Scheme == "" && u.Host == ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.Opaque != "" {
		return false
	}
	return o.trusted(u.Scheme + "://" + u.Host)
}

// CheckTarget returns refusal when a callback or redirect URL was given and
// is not a safe target.
func (s *Kit) CheckTarget(target string, refusal error) error {
	if target != "" && !s.Origins.SafeTarget(target) {
		return refusal
	}
	return nil
}

// Absolute resolves a safe target against the base URL, for Location headers.
func (o *Origins) Absolute(target string) string {
	if strings.HasPrefix(target, "/") {
		return o.base + target
	}
	return target
}

// WithQuery adds a query parameter to a target URL.
func WithQuery(target, key, value string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// clientKey is the rate-limit key of a client address: IPv4 as is, IPv6 by
// its /64, since one host may hold a whole /64.
func clientKey(ip string) string {
	addr, err := netip.ParseAddr(strings.TrimSpace(ip))
	if err != nil {
		if host, _, splitErr := net.SplitHostPort(ip); splitErr == nil {
			addr, err = netip.ParseAddr(host)
		}
	}
	if err != nil {
		return "unknown"
	}
	addr = addr.Unmap()
	if addr.Is4() {
		return addr.String()
	}
	p, _ := addr.Prefix(64)
	return p.String()
}
