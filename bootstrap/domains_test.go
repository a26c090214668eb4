package bootstrap_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/bootstrap"
)

// Ensure the domain settings have their documented defaults and are
// normalised.
func TestLoadConfig_domain_settings(t *testing.T) {
	c, err := load(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Domains.Nameserver != "" || c.Domains.CNAMETarget != "" || c.Domains.Window != 168*time.Hour || c.Domains.Grace != 72*time.Hour ||
		c.Domains.CheckInterval != time.Minute || c.Domains.CheckMaxInterval != time.Hour || c.Domains.RecheckInterval != 24*time.Hour {
		t.Fatalf("domain defaults = %+v", c)
	}
	c, err = load(t, []string{"--dns-nameserver", "10.0.0.2", "--domain-cname-target", "Edge.Example.COM.", "--domain-grace-period", "0s"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Domains.Nameserver != "10.0.0.2:53" || c.Domains.CNAMETarget != "edge.example.com" || c.Domains.Grace != 0 {
		t.Fatalf("DNSNameserver %q, DomainCNAMETarget %q, DomainGrace %s", c.Domains.Nameserver, c.Domains.CNAMETarget, c.Domains.Grace)
	}
}

// Ensure bad domain settings are refused naming their variable.
func TestLoadConfig_refuses_bad_domain_settings(t *testing.T) {
	prod := map[string]string{"GATEHOUSE_ENV": "production", "GATEHOUSE_BASE_URL": "https://id.example.com", "GATEHOUSE_SECRET": longSecret,
		"GATEHOUSE_SMTP_HOST": "smtp.example.com", "GATEHOUSE_INVITATION_URL": "https://app.example.com/invite/{id}"}
	tests := []struct {
		name    string
		env     map[string]string
		wantVar string
	}{
		{"nameserver_without_port", map[string]string{"GATEHOUSE_DNS_NAMESERVER": "dns.internal"}, "GATEHOUSE_DNS_NAMESERVER"},
		{"nameserver_bad_port", map[string]string{"GATEHOUSE_DNS_NAMESERVER": "127.0.0.1:99999"}, "GATEHOUSE_DNS_NAMESERVER"},
		{"cname_target_ip", map[string]string{"GATEHOUSE_DOMAIN_CNAME_TARGET": "192.0.2.1"}, "GATEHOUSE_DOMAIN_CNAME_TARGET"},
		{"cname_target_public_suffix", map[string]string{"GATEHOUSE_DOMAIN_CNAME_TARGET": "co.uk"}, "GATEHOUSE_DOMAIN_CNAME_TARGET"},
		{"window_not_a_duration", map[string]string{"GATEHOUSE_DOMAIN_VERIFICATION_WINDOW": "7d"}, "GATEHOUSE_DOMAIN_VERIFICATION_WINDOW"},
		{"window_zero", map[string]string{"GATEHOUSE_DOMAIN_VERIFICATION_WINDOW": "0s"}, "GATEHOUSE_DOMAIN_VERIFICATION_WINDOW"},
		{"grace_negative", map[string]string{"GATEHOUSE_DOMAIN_GRACE_PERIOD": "-1h"}, "GATEHOUSE_DOMAIN_GRACE_PERIOD"},
		{"interval_too_short", map[string]string{"GATEHOUSE_DOMAIN_CHECK_INTERVAL": "1ms"}, "GATEHOUSE_DOMAIN_CHECK_INTERVAL"},
		{"max_below_interval", map[string]string{"GATEHOUSE_DOMAIN_CHECK_INTERVAL": "10m", "GATEHOUSE_DOMAIN_CHECK_MAX_INTERVAL": "5m"}, "GATEHOUSE_DOMAIN_CHECK_MAX_INTERVAL"},
		{"recheck_too_long", map[string]string{"GATEHOUSE_DOMAIN_RECHECK_INTERVAL": "721h"}, "GATEHOUSE_DOMAIN_RECHECK_INTERVAL"},
		{"production_interval_below_a_second", withEnv(prod, "GATEHOUSE_DOMAIN_CHECK_INTERVAL", "50ms"), "GATEHOUSE_DOMAIN_CHECK_INTERVAL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, nil, tt.env)
			var ce *bootstrap.ConfigError
			if !errors.As(err, &ce) || ce.Var != tt.wantVar {
				t.Fatalf("err = %v, want a ConfigError for %s", err, tt.wantVar)
			}
		})
	}
	if _, err := load(t, nil, prod); err != nil {
		t.Fatalf("the production base of this test is refused: %v", err)
	}
}

func withEnv(env map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for key, val := range env {
		if key != k {
			out[key] = val
		}
	}
	return out
}
