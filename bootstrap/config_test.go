package bootstrap_test

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
	if c.HTTP.BaseURL != "http://localhost:8080" || !c.HTTP.BaseURLFollowsAddr || c.HTTP.Addr != ":8080" || c.DataDir != "./data" || c.Env != bootstrap.Development {
		t.Fatalf("defaults = %+v", c)
	}
	if c.Organizations.InvitationURL != "http://localhost:8080/accept-invitation/{id}" {
		t.Fatalf("InvitationURL = %q", c.Organizations.InvitationURL)
	}
	if c.Database.URL != "sqlite:data/gatehouse.db" {
		t.Fatalf("DatabaseURL = %q, want SQLite in the data directory", c.Database.URL)
	}
	if got, want := c.Database.Timeout, 5*time.Second; got != want {
		t.Fatalf("DatabaseTimeout = %s, want %s", got, want)
	}
	if got, want := c.Database.RateLimitStoreTimeout, 200*time.Millisecond; got != want {
		t.Fatalf("RateLimitStoreTimeout = %s, want %s", got, want)
	}
	if c.SessionCookieName() != "gatehouse.session_token" {
		t.Fatalf("cookie = %q", c.SessionCookieName())
	}
	if got, want := fmt.Sprintf("%d/%v", c.HTTP.ServiceKeyLimit, c.HTTP.ServiceKeyWindow), "6000/1m0s"; got != want {
		t.Fatalf("service-key budget = %s, want %s", got, want)
	}
	if c.Admin.RequireMFA {
		t.Fatal("RequireMFA is on by default in development")
	}
	if c, err := load(t, nil, map[string]string{"GATEHOUSE_ADMIN_REQUIRE_MFA": "true"}); err != nil || !c.Admin.RequireMFA {
		t.Fatalf("GATEHOUSE_ADMIN_REQUIRE_MFA=true in development: %v, RequireMFA %v", err, c.Admin.RequireMFA)
	}
}

func TestLoadConfig_flags_override_environment(t *testing.T) {
	c, err := load(t, []string{"--addr", "127.0.0.1:9999"}, map[string]string{"GATEHOUSE_ADDR": ":7000", "GATEHOUSE_DATA_DIR": "/tmp/x"})
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTP.Addr != "127.0.0.1:9999" || c.DataDir != "/tmp/x" {
		t.Fatalf("Addr=%q DataDir=%q", c.HTTP.Addr, c.DataDir)
	}
}

func TestLoadConfig_refuses_bad_settings(t *testing.T) {
	prod := func(extra map[string]string) map[string]string {
		env := map[string]string{"GATEHOUSE_ENV": "production", "GATEHOUSE_BASE_URL": "https://id.example.com", "GATEHOUSE_SECRET": longSecret,
			"GATEHOUSE_SMTP_HOST": "smtp.example.com", "GATEHOUSE_INVITATION_URL": "https://app.example.com/invitations/{id}"}
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
		{"redis_url_not_redis", map[string]string{"GATEHOUSE_REDIS_URL": "http://cache.example.com:6379"}, "GATEHOUSE_REDIS_URL"},
		{"redis_url_bad_database", map[string]string{"GATEHOUSE_REDIS_URL": "redis://:secret-short@cache.example.com/x"}, "GATEHOUSE_REDIS_URL"},
		{"redis_prefix_with_space", map[string]string{"GATEHOUSE_REDIS_PREFIX": "gate house:"}, "GATEHOUSE_REDIS_PREFIX"},
		{"redis_prefix_empty", map[string]string{"GATEHOUSE_REDIS_PREFIX": " "}, "GATEHOUSE_REDIS_PREFIX"},
		{"zero_rate_limit_store_timeout", map[string]string{"GATEHOUSE_RATE_LIMIT_STORE_TIMEOUT": "0s"}, "GATEHOUSE_RATE_LIMIT_STORE_TIMEOUT"},
		{"long_rate_limit_store_timeout", map[string]string{"GATEHOUSE_RATE_LIMIT_STORE_TIMEOUT": "10s"}, "GATEHOUSE_RATE_LIMIT_STORE_TIMEOUT"},
		{"bad_cookie_prefix", map[string]string{"GATEHOUSE_COOKIE_PREFIX": "a b;"}, "GATEHOUSE_COOKIE_PREFIX"},
		{"host_cookies_on_http", map[string]string{"GATEHOUSE_COOKIE_HOST_PREFIX": "true"}, "GATEHOUSE_COOKIE_HOST_PREFIX"},
		{"bad_host_cookies", map[string]string{"GATEHOUSE_BASE_URL": "https://id.example.com", "GATEHOUSE_COOKIE_HOST_PREFIX": "yes"}, "GATEHOUSE_COOKIE_HOST_PREFIX"},
		{"production_without_invitation_url", prod(map[string]string{"GATEHOUSE_INVITATION_URL": ""}), "GATEHOUSE_INVITATION_URL"},
		{"production_without_smtp", prod(map[string]string{"GATEHOUSE_SMTP_HOST": ""}), "GATEHOUSE_SMTP_HOST"},
		{"production_unencrypted_smtp_to_another_host", prod(map[string]string{"GATEHOUSE_SMTP_TLS": "none"}), "GATEHOUSE_SMTP_TLS"},
		{"bad_smtp_tls", map[string]string{"GATEHOUSE_SMTP_TLS": "ssl"}, "GATEHOUSE_SMTP_TLS"},
		{"smtp_password_without_username", map[string]string{"GATEHOUSE_SMTP_HOST": "mail.example.com", "GATEHOUSE_SMTP_PASSWORD": "pw"}, "GATEHOUSE_SMTP_USERNAME"},
		{"bad_mail_from", map[string]string{"GATEHOUSE_MAIL_FROM": "nobody"}, "GATEHOUSE_MAIL_FROM"},
		{"production_without_base_url", prod(map[string]string{"GATEHOUSE_BASE_URL": ""}), "GATEHOUSE_BASE_URL"},
		{"empty_listen_address", map[string]string{"GATEHOUSE_ADDR": " "}, "GATEHOUSE_ADDR"},
		{"listen_address_without_port", map[string]string{"GATEHOUSE_ADDR": "localhost"}, "GATEHOUSE_ADDR"},
		{"listen_port_out_of_range", map[string]string{"GATEHOUSE_ADDR": ":70000"}, "GATEHOUSE_ADDR"},
		{"invitation_url_without_id", map[string]string{"GATEHOUSE_INVITATION_URL": "https://app.example.com/invite"}, "GATEHOUSE_INVITATION_URL"},
		{"bad_admin_email", map[string]string{"GATEHOUSE_ADMIN_EMAILS": "ada@example.com, not-an-address"}, "GATEHOUSE_ADMIN_EMAILS"},
		{"impersonation_ttl_too_long", map[string]string{"GATEHOUSE_IMPERSONATION_TTL": "48h"}, "GATEHOUSE_IMPERSONATION_TTL"},
		{"admin_require_mfa_not_a_switch", map[string]string{"GATEHOUSE_ADMIN_REQUIRE_MFA": "sometimes"}, "GATEHOUSE_ADMIN_REQUIRE_MFA"},
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
			if got := problemVars(err); len(got) != 1 {
				t.Fatalf("problems = %v, want the one of %s alone", got, tt.wantVar)
			}
			if strings.Contains(err.Error(), "short") && (strings.Contains(tt.name, "secret") || strings.Contains(tt.name, "redis")) {
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
	if c.HTTP.BaseURL != "https://id.example.com" || c.HTTP.HomeURL != "https://www.example.com/product" || len(c.Secrets) != 2 || c.Secrets[0] != "new-"+longSecret {
		t.Fatalf("config = %+v", c)
	}
	if c.SessionCookieName() != "__Secure-gatehouse.session_token" {
		t.Fatalf("cookie on https = %q", c.SessionCookieName())
	}
	if len(c.HTTP.TrustedOrigins) != 2 || c.HTTP.TrustedOrigins[1] != "https://admin.example.com:8443" {
		t.Fatalf("origins = %v", c.HTTP.TrustedOrigins)
	}
	if !c.Admin.RequireMFA {
		t.Fatal("RequireMFA is off by default in production")
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

// Ensure processes starting together on one data directory (replicas
// sharing a volume) all end up with the one secret that was published, and
// leave no partial file behind.
func TestEnsureSecrets_concurrent_starts_share_one_secret(t *testing.T) {
	dir := t.TempDir()
	c, err := load(t, nil, map[string]string{"GATEHOUSE_DATA_DIR": dir})
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	got := make([]bootstrap.Config, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		got[i] = c
		wg.Go(func() { errs[i] = bootstrap.EnsureSecrets(&got[i]) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("start %d: %v", i, errs[i])
		}
		if got[i].Secrets[0] != got[0].Secrets[0] {
			t.Fatalf("start %d has another secret than start 0", i)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != "secret" {
		t.Fatalf("data directory holds %v (%v), want the secret file alone", entries, err)
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

// problemVars lists the variables err names, in order.
func problemVars(err error) []string {
	var errs bootstrap.ConfigErrors
	if !errors.As(err, &errs) {
		return nil
	}
	var out []string
	for _, e := range errs {
		out = append(out, e.Var)
	}
	return out
}

// Ensure production with nothing set names everything it needs in one run,
// one line each.
func TestLoadConfig_production_lists_every_missing_setting(t *testing.T) {
	_, err := load(t, nil, map[string]string{"GATEHOUSE_ENV": "production"})
	want := []string{"GATEHOUSE_BASE_URL", "GATEHOUSE_SECRET", "GATEHOUSE_SMTP_HOST", "GATEHOUSE_INVITATION_URL"}
	if got := problemVars(err); !slices.Equal(got, want) {
		t.Fatalf("problems = %v, want %v\n%v", got, want, err)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("message has %d lines, want one per problem:\n%s", len(lines), err)
	}
	for i, v := range want {
		if !strings.HasPrefix(lines[i], "configuration: "+v+": ") {
			t.Fatalf("line %d = %q, want it to name %s", i+1, lines[i], v)
		}
	}
	if !strings.Contains(lines[0], "https") {
		t.Fatalf("the base URL's problem does not say it must be https: %q", lines[0])
	}
}

// Ensure validation goes on after a problem, without follow-on noise: a
// wrong base URL is reported once, not again through the invitation URL,
// the __Host- cookie rule or the token defaults that follow it.
func TestLoadConfig_reports_every_problem_once(t *testing.T) {
	_, err := load(t, nil, map[string]string{
		"GATEHOUSE_BASE_URL": "not a url", "GATEHOUSE_COOKIE_HOST_PREFIX": "true", "GATEHOUSE_LOG_LEVEL": "loud",
		"GATEHOUSE_SESSION_LIFETIME": "forever", "GATEHOUSE_DOMAIN_CHECK_INTERVAL": "soon", "GATEHOUSE_JWT_LIFETIME": "1s",
	})
	want := []string{"GATEHOUSE_BASE_URL", "GATEHOUSE_LOG_LEVEL", "GATEHOUSE_SESSION_LIFETIME", "GATEHOUSE_DOMAIN_CHECK_INTERVAL", "GATEHOUSE_JWT_LIFETIME"}
	if got := problemVars(err); !slices.Equal(got, want) {
		t.Fatalf("problems = %v, want %v\n%v", got, want, err)
	}
	// A listen address that is wrong leaves the base URL it would give unset.
	_, err = load(t, nil, map[string]string{"GATEHOUSE_ADDR": "nowhere"})
	if got := problemVars(err); !slices.Equal(got, []string{"GATEHOUSE_ADDR"}) {
		t.Fatalf("problems = %v, want the address alone\n%v", got, err)
	}
}

// Ensure a problem names the flag when the value came from the command
// line, and the variable otherwise.
func TestLoadConfig_problems_name_the_flag_or_the_variable(t *testing.T) {
	env := map[string]string{"GATEHOUSE_LOG_LEVEL": "loud"}
	_, err := load(t, []string{"--base-url", "ftp://x", "--max-body-bytes=1"}, env)
	var errs bootstrap.ConfigErrors
	if !errors.As(err, &errs) || len(errs) != 3 {
		t.Fatalf("error = %v, want three problems", err)
	}
	got := []string{errs[0].Setting(), errs[1].Setting(), errs[2].Setting()}
	if want := []string{"--base-url", "GATEHOUSE_LOG_LEVEL", "--max-body-bytes"}; !slices.Equal(got, want) {
		t.Fatalf("settings named = %v, want %v", got, want)
	}
	if errs[0].Var != "GATEHOUSE_BASE_URL" || !strings.HasPrefix(errs[0].Error(), "configuration: --base-url: ") {
		t.Fatalf("first problem = %+v (%v)", errs[0], errs[0])
	}
	// Each problem is found on its own through errors.As.
	var ce *bootstrap.ConfigError
	if !errors.As(err, &ce) || ce != errs[0] {
		t.Fatalf("errors.As found %v, want the first problem", ce)
	}
	c, err := load(t, []string{"--addr", "127.0.0.1:9999"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := c.SettingError("GATEHOUSE_ADDR", "in use"); e.Setting() != "--addr" {
		t.Fatalf("SettingError names %q, want --addr", e.Setting())
	}
	if e := c.SettingError("GATEHOUSE_DATA_DIR", "gone"); e.Setting() != "GATEHOUSE_DATA_DIR" {
		t.Fatalf("SettingError names %q, want the variable", e.Setting())
	}
}

// Ensure the development base URL follows the listen address, and what
// derives from it follows too.
func TestLoadConfig_base_url_follows_the_listen_address(t *testing.T) {
	tests := []struct{ addr, want string }{
		{":9090", "http://localhost:9090"},
		{"127.0.0.1:9090", "http://127.0.0.1:9090"},
		{"[::1]:9090", "http://[::1]:9090"},
		{"0.0.0.0:9090", "http://localhost:9090"},
		{"[::]:9090", "http://localhost:9090"},
		{"localhost:9090", "http://localhost:9090"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			c, err := load(t, []string{"--addr", tt.addr}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.HTTP.BaseURL != tt.want || !c.HTTP.BaseURLFollowsAddr {
				t.Fatalf("BaseURL = %q (follows %v), want %q", c.HTTP.BaseURL, c.HTTP.BaseURLFollowsAddr, tt.want)
			}
			if c.Organizations.InvitationURL != tt.want+"/accept-invitation/{id}" || c.Issuer() != tt.want+"/api/auth" || c.Tokens.JWTAudience[0] != tt.want {
				t.Fatalf("derived: invitation %q, issuer %q, audience %v", c.Organizations.InvitationURL, c.Issuer(), c.Tokens.JWTAudience)
			}
		})
	}
	c, err := load(t, nil, map[string]string{"GATEHOUSE_ADDR": ":9090", "GATEHOUSE_BASE_URL": "http://id.example.test"})
	if err != nil || c.HTTP.BaseURL != "http://id.example.test" || c.HTTP.BaseURLFollowsAddr {
		t.Fatalf("a set base URL: %q (follows %v), %v", c.HTTP.BaseURL, c.HTTP.BaseURLFollowsAddr, err)
	}
}

// Ensure database URLs are checked: bare words are refused with the forms
// accepted, and a SQLite file's directory must exist unless it is the data
// directory, which start-up creates.
func TestLoadConfig_database_urls(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nonexistent", "dir")
	tests := []struct {
		name, url, dataDir string
		ok                 bool
		wantIn             string
	}{
		{"bare_word", "gatehouse", dir, false, "sqlite:PATH"},
		{"words", "not a url at all", dir, false, "postgres://"},
		{"missing_directory", "sqlite:" + filepath.Join(missing, "x.db"), dir, false, missing},
		{"missing_directory_bare_path", filepath.Join(missing, "x.db"), dir, false, missing},
		{"existing_directory", "sqlite:" + filepath.Join(dir, "x.db"), dir, true, ""},
		{"bare_name_with_extension", "gatehouse.db", dir, true, ""},
		{"in_the_data_directory_to_be_created", filepath.Join(missing, "x.db"), missing, true, ""},
		{"postgres", "postgres://u:pw@db.example:5432/gatehouse", dir, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, nil, map[string]string{"GATEHOUSE_DATABASE_URL": tt.url, "GATEHOUSE_DATA_DIR": tt.dataDir})
			if tt.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if got := problemVars(err); !slices.Equal(got, []string{"GATEHOUSE_DATABASE_URL"}) || !strings.Contains(err.Error(), tt.wantIn) {
				t.Fatalf("error = %v, want GATEHOUSE_DATABASE_URL alone, mentioning %q", err, tt.wantIn)
			}
		})
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("loading the configuration created %s: %v", missing, err)
	}
}

// Ensure unencrypted SMTP reaches any host in development (a mail catcher
// on the next container) and only loopback in production.
func TestLoadConfig_unencrypted_smtp(t *testing.T) {
	prod := map[string]string{"GATEHOUSE_ENV": "production", "GATEHOUSE_BASE_URL": "https://id.example.com", "GATEHOUSE_SECRET": longSecret,
		"GATEHOUSE_INVITATION_URL": "https://app.example.com/i/{id}", "GATEHOUSE_SMTP_TLS": "none", "GATEHOUSE_SMTP_HOST": "127.0.0.1"}
	if _, err := load(t, nil, prod); err != nil {
		t.Fatalf("production, none to loopback: %v", err)
	}
	if _, err := load(t, nil, map[string]string{"GATEHOUSE_SMTP_TLS": "none", "GATEHOUSE_SMTP_HOST": "mailpit"}); err != nil {
		t.Fatalf("development, none to another host: %v", err)
	}
}

// Ensure the data directory is created, 0700, only when something is kept
// there, and only the directory itself.
func TestEnsureDataDir(t *testing.T) {
	parent := t.TempDir()
	dataDir := filepath.Join(parent, "data")
	c, err := load(t, nil, map[string]string{"GATEHOUSE_DATA_DIR": dataDir})
	if err != nil {
		t.Fatal(err)
	}
	created, err := bootstrap.EnsureDataDir(c)
	if err != nil || !created {
		t.Fatalf("EnsureDataDir = %v, %v; want created", created, err)
	}
	if info, err := os.Stat(dataDir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("data directory: %v, mode %v", err, info.Mode())
	}
	if created, err := bootstrap.EnsureDataDir(c); err != nil || created {
		t.Fatalf("second EnsureDataDir = %v, %v; want it left as it is", created, err)
	}

	deep := filepath.Join(parent, "a", "b")
	c, err = load(t, nil, map[string]string{"GATEHOUSE_DATA_DIR": deep})
	if err != nil {
		t.Fatal(err)
	}
	var ce *bootstrap.ConfigError
	if _, err := bootstrap.EnsureDataDir(c); !errors.As(err, &ce) || ce.Var != "GATEHOUSE_DATA_DIR" {
		t.Fatalf("EnsureDataDir without its parent = %v, want a GATEHOUSE_DATA_DIR problem", err)
	}

	unused := filepath.Join(parent, "unused")
	c, err = load(t, nil, map[string]string{"GATEHOUSE_DATA_DIR": unused, "GATEHOUSE_SECRET": longSecret, "GATEHOUSE_DATABASE_URL": "postgres://u@h/db"})
	if err != nil {
		t.Fatal(err)
	}
	if created, err := bootstrap.EnsureDataDir(c); err != nil || created {
		t.Fatalf("EnsureDataDir with nothing to keep = %v, %v", created, err)
	}
	if _, err := os.Stat(unused); !os.IsNotExist(err) {
		t.Fatalf("an unused data directory was created: %v", err)
	}
}

// Ensure each setting is declared once: no variable and no flag twice.
func TestSettings_each_declared_once(t *testing.T) {
	vars, flags := map[string]bool{}, map[string]bool{}
	for _, s := range bootstrap.Settings() {
		if vars[s[0]] || flags[s[1]] {
			t.Errorf("%s (%s) is declared twice", s[0], s[1])
		}
		vars[s[0]], flags[s[1]] = true, true
	}
}

func TestLoadConfig_passkey_relying_party(t *testing.T) {
	prod := func(extra map[string]string) map[string]string {
		env := map[string]string{"GATEHOUSE_ENV": "production", "GATEHOUSE_BASE_URL": "https://id.example.com",
			"GATEHOUSE_SECRET": longSecret, "GATEHOUSE_SMTP_HOST": "smtp.example.com", "GATEHOUSE_INVITATION_URL": "https://app.example.com/i/{id}"}
		maps.Copy(env, extra)
		return env
	}
	for name, tc := range map[string]struct {
		env  map[string]string
		want string // the variable named, "" for none
	}{
		"registrable_parent":      {map[string]string{"GATEHOUSE_PASSKEY_RP_ID": "example.com", "GATEHOUSE_PASSKEY_ORIGINS": "https://id.example.com,https://app.example.com"}, ""},
		"public_suffix":           {map[string]string{"GATEHOUSE_PASSKEY_RP_ID": "com"}, "GATEHOUSE_PASSKEY_RP_ID"},
		"public_suffix_two_level": {map[string]string{"GATEHOUSE_PASSKEY_RP_ID": "co.uk", "GATEHOUSE_BASE_URL": "https://id.example.co.uk"}, "GATEHOUSE_PASSKEY_RP_ID"},
		"not_a_suffix_of_origin":  {map[string]string{"GATEHOUSE_PASSKEY_RP_ID": "other.com"}, "GATEHOUSE_PASSKEY_RP_ID"},
		"lookalike_suffix":        {map[string]string{"GATEHOUSE_PASSKEY_RP_ID": "ample.com"}, "GATEHOUSE_PASSKEY_RP_ID"},
		"address":                 {map[string]string{"GATEHOUSE_PASSKEY_RP_ID": "192.0.2.1"}, "GATEHOUSE_PASSKEY_RP_ID"},
		"origin_outside":          {map[string]string{"GATEHOUSE_PASSKEY_ORIGINS": "https://id.example.com,https://evil.example.net"}, "GATEHOUSE_PASSKEY_ORIGINS"},
		"origin_plain_http":       {map[string]string{"GATEHOUSE_PASSKEY_ORIGINS": "http://id.example.com"}, "GATEHOUSE_PASSKEY_ORIGINS"},
		"origin_not_an_origin":    {map[string]string{"GATEHOUSE_PASSKEY_ORIGINS": "https://id.example.com/path"}, "GATEHOUSE_PASSKEY_ORIGINS"},
		"trusted_origin_outside":  {map[string]string{"GATEHOUSE_TRUSTED_ORIGINS": "https://app.other.net"}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, nil, prod(tc.env))
			got := problemVars(err)
			if tc.want == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tc.want != "" && !slices.Equal(got, []string{tc.want}) {
				t.Fatalf("problems = %v, want %s\n%v", got, tc.want, err)
			}
		})
	}
}

// Ensure every true-or-false setting is a boolean flag: -help lists it with
// no placeholder (never "-rate-limit string"), the bare flag means true,
// "=" gives it a value, and it accepts and refuses the words its variable
// does. A setting is true-or-false when the problem for "maybe" says so.
func TestHelp_boolean_settings_are_boolean_flags(t *testing.T) {
	var help strings.Builder
	if _, err := bootstrap.LoadConfig("gatehouse serve", []string{"-h"}, func(string) string { return "" }, &help); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	lines := strings.Split(help.String(), "\n")
	var booleans []string
	for _, s := range bootstrap.Settings() {
		env, flagName := s[0], s[1]
		_, err := load(t, nil, map[string]string{env: "maybe"})
		var ce *bootstrap.ConfigError
		if !errors.As(err, &ce) || ce.Var != env || !strings.Contains(ce.Msg, "true or false") && !strings.Contains(ce.Msg, "on or off") {
			continue
		}
		booleans = append(booleans, env)
		if line := lineOf(lines, "  "+flagName[1:]); line != "  "+flagName[1:] {
			t.Errorf("-help lists %s as %q, want it with no placeholder", flagName, line)
		}
		https := map[string]string{"GATEHOUSE_BASE_URL": "https://id.example.com"} // for __Host- cookies
		if _, err := load(t, []string{flagName}, https); err != nil {
			t.Errorf("the bare %s: %v", flagName, err)
		}
		for _, v := range []string{"true", "false"} {
			if env == "GATEHOUSE_RATE_LIMIT" {
				v = map[string]string{"true": "on", "false": "off"}[v]
			}
			if _, err := load(t, []string{flagName + "=" + v}, https); err != nil {
				t.Errorf("%s=%s: %v", flagName, v, err)
			}
		}
		if _, err := load(t, []string{flagName + "=maybe"}, nil); !errors.As(err, &ce) || ce.Setting() != flagName {
			t.Errorf("%s=maybe: %v, want a problem naming the flag", flagName, err)
		}
		if _, err := load(t, []string{flagName, "false"}, nil); err == nil || !strings.Contains(err.Error(), flagName+"=false") {
			t.Errorf("%s false: %v, want it to say how to give the value (%s=false)", flagName, err, flagName)
		}
	}
	for _, want := range []string{"GATEHOUSE_RATE_LIMIT", "GATEHOUSE_REQUIRE_EMAIL_VERIFICATION", "GATEHOUSE_WEBHOOK_ALLOW_PRIVATE", "GATEHOUSE_ADMIN_REQUIRE_MFA", "GATEHOUSE_COOKIE_HOST_PREFIX"} {
		if !slices.Contains(booleans, want) {
			t.Errorf("%s is not found true-or-false (found %v)", want, booleans)
		}
	}
}

// lineOf returns the first of lines that starts with prefix followed by a
// space or nothing.
func lineOf(lines []string, prefix string) string {
	for _, l := range lines {
		if l == prefix || strings.HasPrefix(l, prefix+" ") {
			return l
		}
	}
	return ""
}
