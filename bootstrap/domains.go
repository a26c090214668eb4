package bootstrap

import (
	"context"
	"log/slog"
	"time"

	"github.com/gatehouse/gatehouse/adapters/dnsresolver"
	"github.com/gatehouse/gatehouse/application/hostdomain"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// DomainConfig is the section of domain verification.
type DomainConfig struct {
	Nameserver       string // host:port, or "" for the system's
	CNAMETarget      string // normalised hostname, or ""
	Window           time.Duration
	Grace            time.Duration
	CheckInterval    time.Duration
	CheckMaxInterval time.Duration
	RecheckInterval  time.Duration
}

var domainSettingList settingList

var (
	settingDNSNameserver          = domainSettingList.add("GATEHOUSE_DNS_NAMESERVER", "dns-nameserver", "", "host:port of the nameserver domain verification asks (default: the system's, from /etc/resolv.conf)")
	settingDomainCNAMETarget      = domainSettingList.add("GATEHOUSE_DOMAIN_CNAME_TARGET", "domain-cname-target", "", "hostname every domain must point a CNAME to, besides its TXT challenge (none by default)")
	settingDomainWindow           = domainSettingList.add("GATEHOUSE_DOMAIN_VERIFICATION_WINDOW", "domain-verification-window", "168h", "how long a new domain has to publish its DNS records before it fails")
	settingDomainGrace            = domainSettingList.add("GATEHOUSE_DOMAIN_GRACE_PERIOD", "domain-grace-period", "72h", "how long a verified domain's required record may be missing before the domain fails")
	settingDomainCheckInterval    = domainSettingList.add("GATEHOUSE_DOMAIN_CHECK_INTERVAL", "domain-check-interval", "1m", "how often the verifier looks for due domains, and the first delay between checks of a pending domain (doubling after each miss; at least 1s in production)")
	settingDomainCheckMaxInterval = domainSettingList.add("GATEHOUSE_DOMAIN_CHECK_MAX_INTERVAL", "domain-check-max-interval", "1h", "longest delay between checks of a pending domain, or of a verified one missing a record")
	settingDomainRecheckInterval  = domainSettingList.add("GATEHOUSE_DOMAIN_RECHECK_INTERVAL", "domain-recheck-interval", "24h", "how often a verified domain's records are checked again")
)

func (d *DomainConfig) load(r *reader) {
	d.Nameserver = parsed(r, settingDNSNameserver, dnsresolver.ParseNameserver)
	if target := r.text(settingDomainCNAMETarget); target != "" {
		var err error
		if d.CNAMETarget, err = domain.NormalizeHostname(target, settingDomainCNAMETarget.env); err != nil {
			r.fail(settingDomainCNAMETarget, "must be a hostname such as edge.example.com (not an IP address, wildcard or public suffix)")
		}
	}
	// Development and tests may check every few milliseconds; production
	// keeps at least a second between passes, out of courtesy to DNS.
	minInterval := 10 * time.Millisecond
	if r.production() {
		minInterval = time.Second
	}
	const day = 24 * time.Hour
	d.Window = r.duration(settingDomainWindow, time.Second, 365*day, "1h")
	d.Grace = r.duration(settingDomainGrace, 0, 90*day, "1h")
	d.CheckInterval = r.duration(settingDomainCheckInterval, minInterval, day, "1h")
	d.CheckMaxInterval = r.duration(settingDomainCheckMaxInterval, minInterval, 7*day, "1h")
	d.RecheckInterval = r.duration(settingDomainRecheckInterval, minInterval, 30*day, "1h")
	if !r.failed(settingDomainCheckInterval, settingDomainCheckMaxInterval) && d.CheckMaxInterval < d.CheckInterval {
		r.fail(settingDomainCheckMaxInterval, "must be at least "+settingDomainCheckInterval.env)
	}
}

// domainSettings turns the configuration into the rules of domain verification.
func domainSettings(c Config) hostdomain.DomainSettings {
	d := c.Domains
	return hostdomain.DomainSettings{
		CNAMETarget: d.CNAMETarget,
		Policy: domain.VerificationPolicy{Window: d.Window, Grace: d.Grace,
			Interval: d.CheckInterval, MaxInterval: d.CheckMaxInterval, Recheck: d.RecheckInterval},
	}
}

// newDNSResolver returns the resolver of domain verification: Go's, asking
// the configured nameserver or the system's.
func newDNSResolver(c Config) (ports.DNSResolver, error) {
	r, err := dnsresolver.New(dnsresolver.Config{Nameserver: c.Domains.Nameserver})
	if err != nil {
		return nil, &ConfigError{Var: settingDNSNameserver.env, Msg: err.Error()}
	}
	return r, nil
}

// maxPassesPerTick bounds the verifier passes one tick runs back to back
// while full batches of domains are due.
const maxPassesPerTick = 50

// domainJob runs the domain verifier: a pass at start, then every interval
// and whenever a domain becomes due at once in this process (created, or a
// recheck asked). While passes find full batches of due domains it runs
// them back to back. It runs beside the requests, never in their way.
// Every replica runs it: each pass claims the domains it checks, so every
// due domain is checked by one of them. Status changes are logged at info,
// inconclusive lookups at warn.
func (a *App) domainJob(interval time.Duration, logger *slog.Logger) job {
	domains := a.app.Domains
	return job{name: "domain verifier", every: interval, atStart: true, wake: domains.Woken(), run: func(ctx context.Context) error {
		for range maxPassesPerTick {
			report, err := domains.CheckDue(ctx)
			if ctx.Err() != nil {
				return nil
			}
			logChecks(logger, report)
			if err != nil || !report.More {
				return err
			}
		}
		return nil
	}}
}

// VerifyDomainsEvery runs the domain verifier alone until ctx ends.
func (a *App) VerifyDomainsEvery(ctx context.Context, interval time.Duration, logger *slog.Logger) {
	runJob(ctx, a.domainJob(interval, logger), logger)
}

func logChecks(logger *slog.Logger, report hostdomain.CheckReport) {
	for _, c := range report.Checks {
		attrs := []any{slog.String("domain_id", string(c.ID)), slog.String("hostname", c.Hostname), slog.String("status", string(c.To))}
		switch {
		case c.LookupErr != nil:
			logger.Warn("domain check inconclusive, retrying later", append(attrs, slog.String("error", c.LookupErr.Error()))...)
		case c.Changed():
			logger.Info("domain status changed", append(attrs, slog.String("from", string(c.From)))...)
		}
	}
}
