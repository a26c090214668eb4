package domain

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// webhookHostProfile maps a webhook's host name for lookup (UTS #46, not
// transitional), as resolvers and HTTP clients do, without DNS's strict
// letters-digits-hyphens rule: an intranet name may hold an underscore.
var webhookHostProfile = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.StrictDomainName(false))

// nonPublicPrefixes are the ranges IsPublicAddress refuses beyond what
// netip classifies: shared address space (CGNAT), IETF and documentation
// ranges, benchmarking, the reserved 240/4 (with the broadcast address),
// and the IPv6 forms that carry or translate an IPv4 address (IPv4-
// compatible, NAT64, 6to4, Teredo), which could reach a private one.
var nonPublicPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4",
		"::/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/32", "2001:db8::/32", "2002::/16", "fec0::/10",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// IsPublicAddress reports whether a webhook may be delivered to addr: a
// global unicast address outside the private (RFC 1918, unique-local),
// loopback, link-local, CGNAT, multicast, unspecified and reserved ranges.
// An IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
func IsPublicAddress(addr netip.Addr) bool {
	addr = addr.Unmap().WithZone("")
	if !addr.IsValid() || !addr.IsGlobalUnicast() || addr.IsPrivate() {
		return false
	}
	for _, p := range nonPublicPrefixes {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}

// CheckWebhookURL checks an endpoint's URL and returns it as it will be
// called, its host name mapped to ASCII as resolvers read it (UTS #46:
// "127。0。0。1" is 127.0.0.1, "Bücher.example" is xn--bcher-kva.example).
// It must be an absolute https URL (http too when allowPrivate)
// with a host, without credentials or a fragment, at most
// MaxWebhookURLLength bytes. A host written as an IP address must be public
// (IsPublicAddress) unless allowPrivate; a host name is checked again at
// every connection, against the addresses it resolves to then. A host that
// only looks like a number ("2130706433", "0x7f.1") is refused: resolvers
// read such names as addresses.
func CheckWebhookURL(raw string, allowPrivate bool) (string, error) {
	bad := func(msg string) (string, error) { return "", webhookInvalid("url", msg) }
	raw = strings.TrimSpace(raw)
	if raw == "" || len(raw) > MaxWebhookURLLength || !utf8.ValidString(raw) ||
		strings.IndexFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return bad("must be an absolute https URL of at most 2048 characters")
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return bad("must be an absolute https URL")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowPrivate:
	default:
		return bad("must use https")
	}
	if u.User != nil {
		return bad("must not hold credentials")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return bad("must not have a fragment")
	}
	host := u.Hostname()
	if host == "" {
		return bad("must name a host")
	}
	if _, err := netip.ParseAddr(host); err != nil {
		// A name is judged, and stored, as resolvers will read it: UTS #46
		// maps the full stops of other scripts ("127。0。0。1") and
		// full-width digits to ASCII, so a spelling cannot slip an address
		// past the checks below.
		ascii, err := webhookHostProfile.ToASCII(host)
		if err != nil || ascii == "" {
			return bad("must name a valid host")
		}
		host = ascii
		if p := u.Port(); p != "" {
			u.Host = net.JoinHostPort(host, p)
		} else {
			u.Host = host
		}
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if !allowPrivate && !IsPublicAddress(addr) {
			return bad("must not point to a private, loopback, link-local or reserved address")
		}
	} else if looksNumeric(host) {
		return bad("must name a DNS host or an IP address")
	}
	if p := u.Port(); p != "" && (len(p) > 5 || p == "0" || p > "65535" && len(p) == 5) {
		return bad("has an invalid port")
	}
	return u.String(), nil
}

// looksNumeric reports whether host's last label is all hexadecimal digits
// with an optional 0x: no DNS name ends so, and resolvers read such hosts
// as IPv4 addresses in a form of their own.
func looksNumeric(host string) bool {
	host = strings.TrimSuffix(host, ".")
	label := strings.ToLower(host[strings.LastIndexByte(host, '.')+1:])
	if hex, ok := strings.CutPrefix(label, "0x"); ok {
		return strings.Trim(hex, "0123456789abcdef") == ""
	}
	return label != "" && strings.Trim(label, "0123456789") == ""
}
