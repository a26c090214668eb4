package bootstrap_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/bootstrap"
)

const longSecret = "0123456789abcdef0123456789abcdef-long"

func load(t *testing.T, args []string, env map[string]string) (bootstrap.Config, error) {
	t.Helper()
	return bootstrap.LoadConfig("test", args, func(k string) string { return env[k] }, io.Discard)
}

func TestLoadConfig_defaults(t *testing.T) {
	c, err := load(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL != "http://localhost:8080" || c.Addr != ":8080" || c.DataDir != "./data" || c.Env != bootstrap.Development {
		t.Fatalf("defaults = %+v", c)
	}
	if c.DatabaseURL != "sqlite:data/gatehouse.db" {
		t.Fatalf("DatabaseURL = %q, want SQLite in the data directory", c.DatabaseURL)
	}
	if got, want := c.DatabaseTimeout, 5*time.Second; got != want {
		t.Fatalf("DatabaseTimeout = %s, want %s", got, want)
	}
	if c.SessionCookieName() != "gatehouse.session_token" {
		t.Fatalf("cookie = %q", c.SessionCookieName())
	}
	if got, want := fmt.Sprintf("%d/%v", c.ServiceKeyLimit, c.ServiceKeyWindow), "6000/1m0s"; got != want {
		t.Fatalf("service-key budget = %s, want %s", got, want)
	}
}

func TestLoadConfig_flags_override_environment(t *testing.T) {
	c, err := load(t, []string{"--addr", "127.0.0.1:9999"}, map[string]string{"GATEHOUSE_ADDR": ":7000", "GATEHOUSE_DATA_DIR": "/tmp/x"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9999" || c.DataDir != "/tmp/x" {
		t.Fatalf("Addr=%q DataDir=%q", c.Addr, c.DataDir)
	}
}

func TestLoadConfig_refuses_bad_settings(t *testing.T) {
	prod := func(extra map[string]string) map[string]string {
		env := map[string]string{"GATEHOUSE_ENV": "production", "GATEHOUSE_BASE_URL": "https://id.example.com", "GATEHOUSE_SECRET": longSecret}
		for k, v := range extra {
			env[k] = v
		}
		return env
	}
	tests := []struct {
		name    string
		env     map[string]string
		wantVar string
	}{
		{"unknown_environment", map[string]string{"GATEHOUSE_ENV": "staging"}, "GATEHOUSE_ENV"},
		{"relative_base_url", map[string]string{"GATEHOUSE_BASE_URL": "localhost:8080"}, "GATEHOUSE_BASE_URL"},
		{"base_url_with_path", map[string]string{"GATEHOUSE_BASE_URL": "http://x.example/api"}, "GATEHOUSE_BASE_URL"},
		{"production_without_secret", prod(map[string]string{"GATEHOUSE_SECRET": ""}), "GATEHOUSE_SECRET"},
		{"production_short_secret", prod(map[string]string{"GATEHOUSE_SECRET": "short"}), "GATEHOUSE_SECRET"},
		{"production_short_rotated_secret", prod(map[string]string{"GATEHOUSE_SECRET": "", "GATEHOUSE_SECRETS": longSecret + ",short"}), "GATEHOUSE_SECRETS"},
		{"production_http_base_url", prod(map[string]string{"GATEHOUSE_BASE_URL": "http://id.example.com"}), "GATEHOUSE_BASE_URL"},
		{"both_secret_variables", map[string]string{"GATEHOUSE_SECRET": longSecret, "GATEHOUSE_SECRETS": longSecret}, "GATEHOUSE_SECRETS"},
		{"mysql_database", map[string]string{"GATEHOUSE_DATABASE_URL": "mysql://u@h/db"}, "GATEHOUSE_DATABASE_URL"},
		{"bad_trusted_origin", map[string]string{"GATEHOUSE_TRUSTED_ORIGINS": "https://ok.example, not a url"}, "GATEHOUSE_TRUSTED_ORIGINS"},
		{"bad_log_level", map[string]string{"GATEHOUSE_LOG_LEVEL": "loud"}, "GATEHOUSE_LOG_LEVEL"},
		{"tiny_body_limit", map[string]string{"GATEHOUSE_MAX_BODY_BYTES": "10"}, "GATEHOUSE_MAX_BODY_BYTES"},
		{"bad_shutdown_timeout", map[string]string{"GATEHOUSE_SHUTDOWN_TIMEOUT": "soon"}, "GATEHOUSE_SHUTDOWN_TIMEOUT"},
		{"bad_database_timeout", map[string]string{"GATEHOUSE_DATABASE_TIMEOUT": "forever"}, "GATEHOUSE_DATABASE_TIMEOUT"},
		{"zero_database_timeout", map[string]string{"GATEHOUSE_DATABASE_TIMEOUT": "0s"}, "GATEHOUSE_DATABASE_TIMEOUT"},
		{"bad_cookie_prefix", map[string]string{"GATEHOUSE_COOKIE_PREFIX": "a b;"}, "GATEHOUSE_COOKIE_PREFIX"},
		{"host_cookies_on_http", map[string]string{"GATEHOUSE_COOKIE_HOST_PREFIX": "true"}, "GATEHOUSE_COOKIE_HOST_PREFIX"},
		{"bad_host_cookies", map[string]string{"GATEHOUSE_BASE_URL": "https://id.example.com", "GATEHOUSE_COOKIE_HOST_PREFIX": "yes"}, "GATEHOUSE_COOKIE_HOST_PREFIX"},
		{"production_without_invitation_url", prod(map[string]string{"GATEHOUSE_SMTP_HOST": "smtp.example.com"}), "GATEHOUSE_INVITATION_URL"},
		{"invitation_url_without_id", map[string]string{"GATEHOUSE_INVITATION_URL": "https://app.example.com/invite"}, "GATEHOUSE_INVITATION_URL"},
		{"bad_admin_email", map[string]string{"GATEHOUSE_ADMIN_EMAILS": "ada@example.com, not-an-address"}, "GATEHOUSE_ADMIN_EMAILS"},
		{"impersonation_ttl_too_long", map[string]string{"GATEHOUSE_IMPERSONATION_TTL": "48h"}, "GATEHOUSE_IMPERSONATION_TTL"},
		{"negative_membership_limit", map[string]string{"GATEHOUSE_MEMBERSHIP_LIMIT": "-1"}, "GATEHOUSE_MEMBERSHIP_LIMIT"},
		{"service_key_rate_without_window", map[string]string{"GATEHOUSE_RATE_LIMIT_SERVICE_KEY": "6000"}, "GATEHOUSE_RATE_LIMIT_SERVICE_KEY"},
		{"service_key_rate_of_zero", map[string]string{"GATEHOUSE_RATE_LIMIT_SERVICE_KEY": "0/1m"}, "GATEHOUSE_RATE_LIMIT_SERVICE_KEY"},
		{"service_key_rate_window_too_short", map[string]string{"GATEHOUSE_RATE_LIMIT_SERVICE_KEY": "10/1ms"}, "GATEHOUSE_RATE_LIMIT_SERVICE_KEY"},
		{"relative_home_url", map[string]string{"GATEHOUSE_HOME_URL": "/welcome"}, "GATEHOUSE_HOME_URL"},
		{"home_url_not_http", map[string]string{"GATEHOUSE_HOME_URL": "javascript:alert(1)"}, "GATEHOUSE_HOME_URL"},
		{"home_url_with_credentials", map[string]string{"GATEHOUSE_HOME_URL": "https://user:pw@www.example.com/"}, "GATEHOUSE_HOME_URL"},
		{"home_url_is_home", map[string]string{"GATEHOUSE_HOME_URL": "http://LOCALHOST:8080/"}, "GATEHOUSE_HOME_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, nil, tt.env)
			var ce *bootstrap.ConfigError
			if !errors.As(err, &ce) || ce.Var != tt.wantVar {
				t.Fatalf("error = %v, want a ConfigError naming %s", err, tt.wantVar)
			}
			if strings.Contains(err.Error(), "short") && strings.Contains(tt.name, "secret") {
				t.Fatalf("error repeats the secret: %v", err)
			}
		})
	}
}

func TestLoadConfig_production_accepts_safe_settings(t *testing.T) {
	c, err := load(t, nil, map[string]string{
		"GATEHOUSE_ENV": "production", "GATEHOUSE_BASE_URL": "https://id.example.com/",
		"GATEHOUSE_SECRETS": "new-" + longSecret + ", old-" + longSecret, "GATEHOUSE_TRUSTED_ORIGINS": "https://app.example.com,https://admin.example.com:8443",
		"GATEHOUSE_SMTP_HOST": "smtp.example.com", "GATEHOUSE_INVITATION_URL": "https://app.example.com/invitations/{id}",
		"GATEHOUSE_HOME_URL": "https://www.example.com/product",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL != "https://id.example.com" || c.HomeURL != "https://www.example.com/product" || len(c.Secrets) != 2 || c.Secrets[0] != "new-"+longSecret {
		t.Fatalf("config = %+v", c)
	}
	if c.SessionCookieName() != "__Secure-gatehouse.session_token" {
		t.Fatalf("cookie on https = %q", c.SessionCookieName())
	}
	if len(c.TrustedOrigins) != 2 || c.TrustedOrigins[1] != "https://admin.example.com:8443" {
		t.Fatalf("origins = %v", c.TrustedOrigins)
	}
}

func TestEnsureSecrets_development_secret_survives_restarts(t *testing.T) {
	dir := t.TempDir()
	c, err := load(t, nil, map[string]string{"GATEHOUSE_DATA_DIR": dir})
	if err != nil {
		t.Fatal(err)
	}
	first := c
	if err := bootstrap.EnsureSecrets(&first); err != nil {
		t.Fatal(err)
	}
	if len(first.Secrets) != 1 || len(first.Secrets[0]) < bootstrap.MinSecretBytes {
		t.Fatalf("generated secrets = %d, len %d", len(first.Secrets), len(first.Secrets[0]))
	}
	info, err := os.Stat(filepath.Join(dir, "secret"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("secret file: %v, mode %v", err, info.Mode())
	}
	second := c
	if err := bootstrap.EnsureSecrets(&second); err != nil {
		t.Fatal(err)
	}
	if second.Secrets[0] != first.Secrets[0] {
		t.Fatal("a restart generated a new secret: sessions would not survive")
	}
}

func TestEnsureSecrets_configured_secret_is_never_written(t *testing.T) {
	dir := t.TempDir()
	c, err := load(t, nil, map[string]string{"GATEHOUSE_DATA_DIR": dir, "GATEHOUSE_SECRET": longSecret})
	if err != nil {
		t.Fatal(err)
	}
	if err := bootstrap.EnsureSecrets(&c); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "secret")); !os.IsNotExist(err) {
		t.Fatalf("a secret file was written: %v", err)
	}
}
