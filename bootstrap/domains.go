package bootstrap

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/gatehouse/gatehouse/adapters/dnsresolver"
	"github.com/gatehouse/gatehouse/application/command"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// loadDomains reads the settings of domain verification.
func (c *Config) loadDomains(get func(string) string, p *problems) {
	ns, err := dnsresolver.ParseNameserver(get("GATEHOUSE_DNS_NAMESERVER"))
	if err != nil {
		p.add("GATEHOUSE_DNS_NAMESERVER", err.Error())
	}
	c.DNSNameserver = ns
	if target := get("GATEHOUSE_DOMAIN_CNAME_TARGET"); target != "" {
		if c.DomainCNAMETarget, err = domain.NormalizeHostname(target, "GATEHOUSE_DOMAIN_CNAME_TARGET"); err != nil {
			p.add("GATEHOUSE_DOMAIN_CNAME_TARGET", "must be a hostname such as edge.example.com (not an IP address, wildcard or public suffix)")
		}
	}
	// Development and tests may check every few milliseconds; production
	// keeps at least a second between passes, out of courtesy to DNS.
	minInterval := 10 * time.Millisecond
	if c.Env == Production {
		minInterval = time.Second
	}
	durations := []struct {
		env      string
		dst      *time.Duration
		min, max time.Duration
	}{
		{"GATEHOUSE_DOMAIN_VERIFICATION_WINDOW", &c.DomainWindow, time.Second, 365 * 24 * time.Hour},
		{"GATEHOUSE_DOMAIN_GRACE_PERIOD", &c.DomainGrace, 0, 90 * 24 * time.Hour},
		{"GATEHOUSE_DOMAIN_CHECK_INTERVAL", &c.DomainCheckInterval, minInterval, 24 * time.Hour},
		{"GATEHOUSE_DOMAIN_CHECK_MAX_INTERVAL", &c.DomainCheckMaxInterval, minInterval, 7 * 24 * time.Hour},
		{"GATEHOUSE_DOMAIN_RECHECK_INTERVAL", &c.DomainRecheckInterval, minInterval, 30 * 24 * time.Hour},
	}
	for _, d := range durations {
		v, err := time.ParseDuration(get(d.env))
		if err != nil || v < d.min || v > d.max {
			p.add(d.env, fmt.Sprintf("must be a duration from %s to %s, such as 1h", d.min, d.max))
			continue
		}
		*d.dst = v
	}
	if !p.has("GATEHOUSE_DOMAIN_CHECK_INTERVAL") && !p.has("GATEHOUSE_DOMAIN_CHECK_MAX_INTERVAL") && c.DomainCheckMaxInterval < c.DomainCheckInterval {
		p.add("GATEHOUSE_DOMAIN_CHECK_MAX_INTERVAL", "must be at least GATEHOUSE_DOMAIN_CHECK_INTERVAL")
	}
}

// domainSettings turns the configuration into the rules of domain verification.
func domainSettings(c Config) command.DomainSettings {
	return command.DomainSettings{
		CNAMETarget: c.DomainCNAMETarget,
		Policy: domain.VerificationPolicy{Window: c.DomainWindow, Grace: c.DomainGrace,
			Interval: c.DomainCheckInterval, MaxInterval: c.DomainCheckMaxInterval, Recheck: c.DomainRecheckInterval},
	}
}

// newDNSResolver returns the resolver of domain verification: Go's, asking
// the configured nameserver or the system's.
func newDNSResolver(c Config) (ports.DNSResolver, error) {
	r, err := dnsresolver.New(dnsresolver.Config{Nameserver: c.DNSNameserver})
	if err != nil {
		return nil, &ConfigError{Var: "GATEHOUSE_DNS_NAMESERVER", Msg: err.Error()}
	}
	return r, nil
}

// maxPassesPerTick bounds the verifier passes one tick runs back to back
// while full batches of domains are due.
const maxPassesPerTick = 50

// VerifyDomainsEvery runs the domain verifier until ctx ends: a pass now,
// then every interval and whenever a domain becomes due at once in this
// process (created, or a recheck asked). While passes find full batches of
// due domains it runs them back to back. It runs beside the requests, never
// in their way; several processes may run it at once. Status changes are
// logged at info, inconclusive lookups at warn.
func (a *App) VerifyDomainsEvery(ctx context.Context, interval time.Duration, logger *slog.Logger) {
	domains := a.app.Commands.Domains
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for range maxPassesPerTick {
			report, err := domains.CheckDue(ctx)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				logger.Warn("domain verifier", slog.String("error", err.Error()))
			}
			logChecks(logger, report)
			if err != nil || !report.More {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-domains.Woken():
		}
	}
}

func logChecks(logger *slog.Logger, report command.CheckReport) {
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
