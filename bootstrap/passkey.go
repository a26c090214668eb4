package bootstrap

import (
	"net"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/gatehouse/gatehouse/application/mfa"
)

// PasskeyConfig is the section of passkeys (WebAuthn): the relying party's
// id and name, and the origins a ceremony may come from. Empty values follow
// the base URL (and the trusted origins), which tests move after loading.
type PasskeyConfig struct {
	RPID    string
	RPName  string
	Origins []string
}

var passkeySettingList settingList

var (
	settingPasskeyRPID    = passkeySettingList.add("GATEHOUSE_PASSKEY_RP_ID", "passkey-rp-id", "", "WebAuthn relying party id: a domain every passkey origin belongs to, such as example.com (default: the host of BASE_URL); changing it orphans the registered passkeys")
	settingPasskeyRPName  = passkeySettingList.add("GATEHOUSE_PASSKEY_RP_NAME", "passkey-rp-name", ProductName, "the name authenticators show beside a passkey")
	settingPasskeyOrigins = passkeySettingList.add("GATEHOUSE_PASSKEY_ORIGINS", "passkey-origins", "", "comma-separated origins passkey ceremonies may come from (default: the origin of BASE_URL and the trusted origins)")
)

func (p *PasskeyConfig) load(r *reader, h HTTPConfig) {
	p.RPID = strings.ToLower(strings.TrimSpace(r.text(settingPasskeyRPID)))
	if p.RPName = strings.TrimSpace(r.text(settingPasskeyRPName)); p.RPName == "" {
		r.fail(settingPasskeyRPName, "must not be empty")
	}
	p.Origins = parsed(r, settingPasskeyOrigins, parseOrigins)
	if r.failed(settingPasskeyOrigins) || h.BaseURL == "" {
		return
	}
	s := passkeySettingsOf(*p, h)
	if msg := checkRelyingParty(s, r.production()); msg != "" {
		if p.RPID != "" {
			r.fail(settingPasskeyRPID, msg)
		} else {
			r.fail(settingPasskeyOrigins, msg)
		}
	}
}

// passkeySettingsOf fills the defaults: the host of the base URL, and its
// origin with the trusted origins.
func passkeySettingsOf(p PasskeyConfig, h HTTPConfig) mfa.PasskeySettings {
	s := mfa.PasskeySettings{RPID: p.RPID, RPName: p.RPName, Origins: p.Origins}
	if s.RPID == "" {
		if u, err := url.Parse(h.BaseURL); err == nil {
			s.RPID = u.Hostname()
		}
	}
	if len(s.Origins) == 0 {
		// A trusted origin outside the relying party could not use a
		// passkey anyway; only GATEHOUSE_PASSKEY_ORIGINS must all fit.
		s.Origins = []string{h.BaseURL}
		for _, o := range h.TrustedOrigins {
			if u, err := url.Parse(o); err == nil && underRPID(u.Hostname(), s.RPID) {
				s.Origins = append(s.Origins, o)
			}
		}
	}
	if s.RPName == "" {
		s.RPName = ProductName
	}
	return s
}

// checkRelyingParty returns what is wrong with the relying party, or "": its
// id must be a domain (not an address, nor a public suffix such as co.uk)
// and every origin's host must be it or one of its subdomains, as browsers
// require. Production wants https origins and a domain
// (development accepts the loopback address its tests listen on).
func checkRelyingParty(s mfa.PasskeySettings, production bool) string {
	id := s.RPID
	if net.ParseIP(id) != nil {
		if production {
			return "must be a domain name, not an IP address (browsers refuse passkeys on addresses)"
		}
		return "" // development on a loopback address: passkeys are off
	}
	if id == "" || strings.ContainsAny(id, ":/ ") {
		return "must be a domain name such as example.com"
	}
	if id != "localhost" {
		if suffix, _ := publicsuffix.PublicSuffix(id); suffix == id {
			return id + " is a public suffix: name a registrable domain such as example.com"
		}
	}
	for _, o := range s.Origins {
		u, err := url.Parse(o)
		if err != nil {
			return "origin " + o + " is not a URL"
		}
		if !underRPID(u.Hostname(), id) {
			return "origin " + o + " is not " + id + " nor one of its subdomains, so a browser would refuse its passkeys"
		}
		if production && u.Scheme != "https" {
			return "origin " + o + " must be https in production"
		}
	}
	return ""
}

// underRPID reports whether host is the relying party id or one of its
// subdomains.
func underRPID(host, id string) bool {
	host = strings.ToLower(host)
	return host == id || strings.HasSuffix(host, "."+id)
}

// passkeySettings turns the configuration into the relying party, following
// the base URL as it is now.
func passkeySettings(c Config) mfa.PasskeySettings { return passkeySettingsOf(c.Passkeys, c.HTTP) }
