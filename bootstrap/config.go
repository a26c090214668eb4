package bootstrap

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/mail"
	"net/netip"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/mailer"
	"github.com/gatehouse/gatehouse/domain"
)

// Environment is development or production. Production refuses unsafe settings.
type Environment string

// The environments.
const (
	Development Environment = "development"
	Production  Environment = "production"
)

// Config is Gatehouse's whole configuration.
type Config struct {
	Env             Environment
	BaseURL         string // public origin, no trailing slash
	HomeURL         string // where / redirects; "" shows the home page
	Addr            string
	DataDir         string
	DatabaseURL     string
	DatabaseTimeout time.Duration
	Secrets         []string // the first signs; all verify
	SecretSource    string   // where the secrets came from, for the start-up line
	TrustedOrigins  []string
	CookiePrefix    string
	HostCookies     bool // __Host- cookie names on https
	LogLevel        slog.Level
	MaxBodyBytes    int64
	ShutdownTimeout time.Duration
	TrustedProxies  []string
	RateLimit       bool
	// ServiceKeyLimit requests per ServiceKeyWindow are allowed to each
	// service key on the trusted routes.
	ServiceKeyLimit  int
	ServiceKeyWindow time.Duration

	SessionLifetime  time.Duration
	SessionUpdateAge time.Duration
	SessionFreshAge  time.Duration
	PasswordMin      int
	PasswordMax      int
	LockoutThreshold int
	LockoutCooldown  time.Duration
	RequireVerified  bool

	SMTPHost     string
	SMTPPort     int
	SMTPTLS      string
	SMTPUsername string
	SMTPPassword string
	MailFrom     string
	MailQueue    int // mails that may wait to be delivered

	AdminEmails       []string
	AdminUserIDs      []string
	ImpersonationTTL  time.Duration
	InvitationTTL     time.Duration
	InvitationURL     string
	InvitationLimit   int
	MembershipLimit   int
	OrganizationLimit int

	DNSNameserver          string // host:port, or "" for the system's
	DomainCNAMETarget      string // normalised hostname, or ""
	DomainWindow           time.Duration
	DomainGrace            time.Duration
	DomainCheckInterval    time.Duration
	DomainCheckMaxInterval time.Duration
	DomainRecheckInterval  time.Duration

	JWTIssuer            string   // iss of framework tokens (default: Issuer())
	JWTAudience          []string // aud of framework tokens (default: BaseURL)
	JWTLifetime          time.Duration
	CodeLifetime         time.Duration
	AccessTokenLifetime  time.Duration
	IDTokenLifetime      time.Duration
	RefreshTokenLifetime time.Duration
	AccessTokenAudience  string // aud of OAuth access tokens (default: Issuer())
	// SigningKeyReloadInterval is how often each instance reloads the
	// signing keys; a rotated key signs two of these after the rotation.
	SigningKeyReloadInterval time.Duration

	// BaseURLFollowsAddr reports that GATEHOUSE_BASE_URL was not set and
	// BaseURL was derived from Addr (development only; see DefaultBaseURL).
	BaseURLFollowsAddr bool

	flags map[string]bool // the variables whose values came from flags
}

// ConfigError names the setting that is wrong.
type ConfigError struct {
	Var  string // the environment variable, e.g. GATEHOUSE_BASE_URL
	Flag string // the flag, e.g. --base-url, when the value came from the command line
	Msg  string
}

func (e *ConfigError) Error() string { return "configuration: " + e.Setting() + ": " + e.Msg }

// Setting names the setting as the operator gave it: the flag if it was
// given on the command line, else the environment variable.
func (e *ConfigError) Setting() string {
	if e.Flag != "" {
		return e.Flag
	}
	return e.Var
}

// ConfigErrors is every problem LoadConfig found, in the order of the
// settings. Its message has one line per problem; errors.As finds each
// *ConfigError through Unwrap.
type ConfigErrors []*ConfigError

func (es ConfigErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the problems, for errors.Is and errors.As.
func (es ConfigErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// SettingError reports a problem with the setting env found after loading
// (a listen address already in use, say), naming its flag if the value
// came from the command line.
func (c Config) SettingError(env, msg string) *ConfigError {
	e := &ConfigError{Var: env, Msg: msg}
	if c.flags[env] {
		e.Flag = "--" + flagOf(env)
	}
	return e
}

// problems collects a configuration's problems, so that one run reports
// them all.
type problems struct{ errs ConfigErrors }

// add records that the setting env is wrong.
func (p *problems) add(env, msg string) { p.errs = append(p.errs, &ConfigError{Var: env, Msg: msg}) }

// has reports whether the setting env was found wrong. What derives from a
// wrong setting is not checked, so that one mistake is reported once.
func (p *problems) has(env string) bool {
	for _, e := range p.errs {
		if e.Var == env {
			return true
		}
	}
	return false
}

func (p *problems) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	return p.errs
}

// MinSecretBytes is the shortest secret production accepts.
const MinSecretBytes = 32

type setting struct {
	env, flag, def, usage string
	secret                bool
}

// settings lists every setting once: its variable, its flag, its default and
// what it means. docs/configuration.md's table and -help come from the same facts.
var settings = []setting{
	{"GATEHOUSE_ENV", "env", "development", "development or production (production refuses unsafe settings)", false},
	{"GATEHOUSE_BASE_URL", "base-url", "", "public URL of the service; must be set, https, in production (development default: http://localhost:PORT, following GATEHOUSE_ADDR)", false},
	{"GATEHOUSE_HOME_URL", "home-url", "", "absolute http(s) URL that / redirects to, such as your product's site (empty: / shows Gatehouse's own home page)", false},
	{"GATEHOUSE_ADDR", "addr", ":8080", "listen address", false},
	{"GATEHOUSE_DATA_DIR", "data-dir", "./data", "directory for the default SQLite database and the generated development secret; created (0700, its parent must exist) when used", false},
	{"GATEHOUSE_DATABASE_URL", "database-url", "", "postgres://USER:PASSWORD@HOST:PORT/DATABASE for PostgreSQL; sqlite:PATH, or a path with a directory or ending in .db, .sqlite or .sqlite3, for SQLite, whose directory must exist (default: DATA_DIR/gatehouse.db)", false},
	{"GATEHOUSE_DATABASE_TIMEOUT", "database-timeout", "5s", "longest a database statement or transaction may take, waiting for a connection included; past it the request answers 503 with Retry-After", false},
	{"GATEHOUSE_SECRET", "secret", "", "signing secret, at least 32 bytes (generated and kept in DATA_DIR in development)", true},
	{"GATEHOUSE_SECRETS", "secrets", "", "comma-separated secrets for rotation: the first signs, all verify", true},
	{"GATEHOUSE_TRUSTED_ORIGINS", "trusted-origins", "", "comma-separated origins allowed to call the framework from browsers", false},
	{"GATEHOUSE_COOKIE_PREFIX", "cookie-prefix", "gatehouse", "prefix of cookie names (better-auth lets a Better Auth deployment move over)", false},
	{"GATEHOUSE_COOKIE_HOST_PREFIX", "cookie-host-prefix", "false", "true: on https, cookies are named __Host- instead of __Secure- (no sibling subdomain can set them; Better Auth's getSessionCookie no longer finds them)", false},
	{"GATEHOUSE_LOG_LEVEL", "log-level", "info", "debug, info, warn or error", false},
	{"GATEHOUSE_MAX_BODY_BYTES", "max-body-bytes", "1048576", "largest request body accepted (413 above)", false},
	{"GATEHOUSE_SHUTDOWN_TIMEOUT", "shutdown-timeout", "20s", "how long SIGTERM waits for in-flight requests", false},
	{"GATEHOUSE_TRUSTED_PROXIES", "trusted-proxies", "", "comma-separated proxy addresses or CIDRs whose X-Forwarded-For is believed (none by default; X-Real-IP never is)", false},
	{"GATEHOUSE_RATE_LIMIT", "rate-limit", "on", "on or off: rate limits (per address on the framework, admin API and pages; per service key on the trusted API; see docs/security.md)", false},
	{"GATEHOUSE_RATE_LIMIT_SERVICE_KEY", "rate-limit-service-key", "6000/1m", "requests each service key may make to the trusted API per window, as N/DURATION", false},
	{"GATEHOUSE_SESSION_LIFETIME", "session-lifetime", "168h", "how long a remembered session lives, pushed forward as it is used", false},
	{"GATEHOUSE_SESSION_UPDATE_AGE", "session-update-age", "24h", "how often a used session's expiry is pushed forward", false},
	{"GATEHOUSE_SESSION_FRESH_AGE", "session-fresh-age", "24h", "how recent a sign-in must be for sensitive changes such as change-email (0 disables)", false},
	{"GATEHOUSE_PASSWORD_MIN_LENGTH", "password-min-length", "8", "shortest password accepted, in characters", false},
	{"GATEHOUSE_PASSWORD_MAX_LENGTH", "password-max-length", "128", "longest password accepted, in characters", false},
	{"GATEHOUSE_LOCKOUT_THRESHOLD", "lockout-threshold", "10", "consecutive wrong passwords that lock an account's password (0 disables)", false},
	{"GATEHOUSE_LOCKOUT_COOLDOWN", "lockout-cooldown", "15m", "how long a locked password stays locked (a password reset lifts it)", false},
	{"GATEHOUSE_REQUIRE_EMAIL_VERIFICATION", "require-email-verification", "true", "true: sign-in waits for a verified address, and sign-up never reveals taken addresses", false},
	{"GATEHOUSE_SMTP_HOST", "smtp-host", "", "SMTP server for mail; empty logs the links instead (development only)", false},
	{"GATEHOUSE_SMTP_PORT", "smtp-port", "587", "SMTP port", false},
	{"GATEHOUSE_SMTP_TLS", "smtp-tls", "starttls", "starttls, tls (implicit) or none (no encryption: any host in development, a loopback host only in production)", false},
	{"GATEHOUSE_SMTP_USERNAME", "smtp-username", "", "SMTP user name (no authentication when empty)", false},
	{"GATEHOUSE_SMTP_PASSWORD", "smtp-password", "", "SMTP password", true},
	{"GATEHOUSE_MAIL_FROM", "mail-from", "Gatehouse <no-reply@localhost>", "sender of every mail", false},
	{"GATEHOUSE_MAIL_QUEUE_SIZE", "mail-queue-size", "1000", "mails that may wait for the SMTP server; when it is full, sign-up answers 503 whether or not the address has an account", false},
	{"GATEHOUSE_ADMIN_EMAILS", "admin-emails", "", "comma-separated addresses whose users are platform administrators once the address is verified", false},
	{"GATEHOUSE_ADMIN_USER_IDS", "admin-user-ids", "", "comma-separated user ids that are platform administrators", false},
	{"GATEHOUSE_IMPERSONATION_TTL", "impersonation-ttl", "1h", "how long an administrator's impersonation session lasts", false},
	{"GATEHOUSE_INVITATION_TTL", "invitation-ttl", "48h", "how long an organization invitation can be accepted", false},
	{"GATEHOUSE_INVITATION_URL", "invitation-url", "", "page of your application that accepts an invitation; {id} is replaced by its id (required in production; development default: BASE_URL/accept-invitation/{id})", false},
	{"GATEHOUSE_INVITATION_LIMIT", "invitation-limit", "100", "most open invitations an organization may have", false},
	{"GATEHOUSE_MEMBERSHIP_LIMIT", "membership-limit", "0", "most members an organization may have (0: no limit)", false},
	{"GATEHOUSE_ORGANIZATION_LIMIT", "organization-limit", "0", "most organizations a user may belong to and still create another (0: no limit)", false},
	{"GATEHOUSE_DNS_NAMESERVER", "dns-nameserver", "", "host:port of the nameserver domain verification asks (default: the system's, from /etc/resolv.conf)", false},
	{"GATEHOUSE_DOMAIN_CNAME_TARGET", "domain-cname-target", "", "hostname every domain must point a CNAME to, besides its TXT challenge (none by default)", false},
	{"GATEHOUSE_DOMAIN_VERIFICATION_WINDOW", "domain-verification-window", "168h", "how long a new domain has to publish its DNS records before it fails", false},
	{"GATEHOUSE_DOMAIN_GRACE_PERIOD", "domain-grace-period", "72h", "how long a verified domain's required record may be missing before the domain fails", false},
	{"GATEHOUSE_DOMAIN_CHECK_INTERVAL", "domain-check-interval", "1m", "how often the verifier looks for due domains, and the first delay between checks of a pending domain (doubling after each miss; at least 1s in production)", false},
	{"GATEHOUSE_DOMAIN_CHECK_MAX_INTERVAL", "domain-check-max-interval", "1h", "longest delay between checks of a pending domain, or of a verified one missing a record", false},
	{"GATEHOUSE_DOMAIN_RECHECK_INTERVAL", "domain-recheck-interval", "24h", "how often a verified domain's records are checked again", false},
	{"GATEHOUSE_JWT_ISSUER", "jwt-issuer", "", "iss of the framework's JWTs (/api/auth/token, set-auth-jwt); default: the issuer, BASE_URL/api/auth", false},
	{"GATEHOUSE_JWT_AUDIENCE", "jwt-audience", "", "comma-separated aud of the framework's JWTs; default: BASE_URL, as Better Auth", false},
	{"GATEHOUSE_JWT_LIFETIME", "jwt-lifetime", "15m", "lifetime of the framework's JWTs", false},
	{"GATEHOUSE_OAUTH_CODE_LIFETIME", "oauth-code-lifetime", "1m", "lifetime of an OAuth authorization code (at most 10m)", false},
	{"GATEHOUSE_OAUTH_ACCESS_TOKEN_LIFETIME", "oauth-access-token-lifetime", "15m", "lifetime of an OAuth access token (a JWT APIs verify without calling Gatehouse)", false},
	{"GATEHOUSE_OAUTH_ID_TOKEN_LIFETIME", "oauth-id-token-lifetime", "1h", "lifetime of an OpenID Connect ID token", false},
	{"GATEHOUSE_OAUTH_REFRESH_TOKEN_LIFETIME", "oauth-refresh-token-lifetime", "720h", "absolute lifetime of a grant's refresh tokens: rotation never extends it", false},
	{"GATEHOUSE_OAUTH_ACCESS_TOKEN_AUDIENCE", "oauth-access-token-audience", "", "aud of OAuth access tokens; default: the issuer, BASE_URL/api/auth (must differ from GATEHOUSE_JWT_AUDIENCE)", false},
	{"GATEHOUSE_SIGNING_KEY_RELOAD_INTERVAL", "signing-key-reload-interval", "1m", "how often each instance reloads the signing keys (1s to 5m, the same on every instance); a rotated key signs two intervals after the rotation", false},
}

// LoadConfig reads settings from flags in args, then the environment through
// getenv, then the defaults. It validates everything and reports every
// problem at once, as ConfigErrors, each naming the flag if the value came
// from the command line, else the variable. It writes no file; it only
// looks whether a SQLite database's directory exists (see EnsureDataDir and
// EnsureSecrets for what start-up creates).
func LoadConfig(name string, args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(usage)
	values := map[string]*string{}
	for _, s := range settings {
		def := getenv(s.env)
		if def == "" {
			def = s.def
		}
		help := s.usage + " (" + s.env + ")"
		if s.secret {
			help += "; prefer the variable: flags show in process lists"
		}
		values[s.env] = fs.String(s.flag, def, help)
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	fromFlags := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { fromFlags[envOf(f.Name)] = true })
	get := func(env string) string { return strings.TrimSpace(*values[env]) }
	c, err := buildConfig(get)
	c.flags = fromFlags
	var errs ConfigErrors
	if errors.As(err, &errs) {
		for _, e := range errs {
			if fromFlags[e.Var] {
				e.Flag = "--" + flagOf(e.Var)
			}
		}
	}
	return c, err
}

// flagOf returns the flag of the setting env, without dashes.
func flagOf(env string) string {
	for _, s := range settings {
		if s.env == env {
			return s.flag
		}
	}
	return ""
}

// envOf returns the variable of the setting whose flag is name.
func envOf(name string) string {
	for _, s := range settings {
		if s.flag == name {
			return s.env
		}
	}
	return ""
}

func buildConfig(get func(string) string) (Config, error) {
	var c Config
	p := &problems{}
	switch env := Environment(get("GATEHOUSE_ENV")); env {
	case Development, Production:
		c.Env = env
	default:
		c.Env = Development // the rest is checked as development checks it
		p.add("GATEHOUSE_ENV", "must be development or production")
	}
	if c.Addr = get("GATEHOUSE_ADDR"); c.Addr == "" {
		p.add("GATEHOUSE_ADDR", "must not be empty")
	} else if err := checkAddr(c.Addr); err != nil {
		p.add("GATEHOUSE_ADDR", err.Error())
	}
	c.loadBaseURL(get("GATEHOUSE_BASE_URL"), p)
	if c.HomeURL = get("GATEHOUSE_HOME_URL"); c.HomeURL != "" && !isHomeURL(c.HomeURL, c.BaseURL) {
		p.add("GATEHOUSE_HOME_URL", "must be an absolute http(s) URL other than the base URL itself")
	}
	if c.DataDir = get("GATEHOUSE_DATA_DIR"); c.DataDir == "" {
		p.add("GATEHOUSE_DATA_DIR", "must not be empty")
	}
	c.loadDatabaseURL(get("GATEHOUSE_DATABASE_URL"), p)
	var err error
	if c.DatabaseTimeout, err = time.ParseDuration(get("GATEHOUSE_DATABASE_TIMEOUT")); err != nil || c.DatabaseTimeout < 100*time.Millisecond || c.DatabaseTimeout > 5*time.Minute {
		p.add("GATEHOUSE_DATABASE_TIMEOUT", "must be a duration from 100ms to 5m, such as 5s")
	}
	c.loadSecrets(get("GATEHOUSE_SECRET"), get("GATEHOUSE_SECRETS"), p)
	if c.TrustedOrigins, err = parseOrigins(get("GATEHOUSE_TRUSTED_ORIGINS")); err != nil {
		p.add("GATEHOUSE_TRUSTED_ORIGINS", err.Error())
	}
	c.CookiePrefix = get("GATEHOUSE_COOKIE_PREFIX")
	if !isToken(c.CookiePrefix) {
		p.add("GATEHOUSE_COOKIE_PREFIX", "must be letters, digits, '-', '_' or '.'")
	}
	switch get("GATEHOUSE_COOKIE_HOST_PREFIX") {
	case "true", "on":
		c.HostCookies = true
		if c.BaseURL != "" && !strings.HasPrefix(c.BaseURL, "https://") {
			p.add("GATEHOUSE_COOKIE_HOST_PREFIX", "needs an https GATEHOUSE_BASE_URL: browsers keep __Host- cookies only from secure origins")
		}
	case "false", "off":
	default:
		p.add("GATEHOUSE_COOKIE_HOST_PREFIX", "must be true or false")
	}
	if err := c.LogLevel.UnmarshalText([]byte(get("GATEHOUSE_LOG_LEVEL"))); err != nil {
		p.add("GATEHOUSE_LOG_LEVEL", "must be debug, info, warn or error")
	}
	if c.MaxBodyBytes, err = strconv.ParseInt(get("GATEHOUSE_MAX_BODY_BYTES"), 10, 64); err != nil || c.MaxBodyBytes < 1024 || c.MaxBodyBytes > 64<<20 {
		p.add("GATEHOUSE_MAX_BODY_BYTES", "must be a whole number of bytes from 1024 to 67108864")
	}
	if c.ShutdownTimeout, err = time.ParseDuration(get("GATEHOUSE_SHUTDOWN_TIMEOUT")); err != nil || c.ShutdownTimeout <= 0 {
		p.add("GATEHOUSE_SHUTDOWN_TIMEOUT", "must be a positive duration such as 20s")
	}
	c.loadAuth(get, p)
	c.loadAdmin(get, p)
	c.loadDomains(get, p)
	c.loadTokens(get, p)
	return c, p.err()
}

// checkAddr checks a listen address: HOST:PORT or :PORT, the port a number.
func checkAddr(addr string) error {
	errAddr := errors.New("must be HOST:PORT or :PORT, such as :8080 or 127.0.0.1:8080")
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errAddr
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return errAddr
	}
	return nil
}

// DefaultBaseURL is the base URL of a development service listening on
// addr: http, addr's host and port, and localhost for a host that names
// every interface (":9090", "0.0.0.0:9090", "[::]:9090").
func DefaultBaseURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	switch host {
	case "", "0.0.0.0", "::":
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// loadBaseURL reads the public URL. Unset, development follows the listen
// address; production must name its https origin.
func (c *Config) loadBaseURL(raw string, p *problems) {
	switch {
	case raw == "" && c.Env == Production:
		p.add("GATEHOUSE_BASE_URL", "must be set in production, an https URL")
	case raw == "":
		if c.Addr != "" && !p.has("GATEHOUSE_ADDR") {
			c.BaseURL, _ = DefaultBaseURL(c.Addr)
			c.BaseURLFollowsAddr = true
		}
	default:
		base, err := parseBaseURL(raw)
		switch {
		case err != nil:
			p.add("GATEHOUSE_BASE_URL", err.Error())
		case c.Env == Production && !strings.HasPrefix(base, "https://"):
			p.add("GATEHOUSE_BASE_URL", "must be an https URL in production")
		default:
			c.BaseURL = base
		}
	}
}

// loadDatabaseURL reads the database URL (see gormstore.DatabaseURL for
// its forms). A SQLite file's directory must exist, unless it is the data
// directory, which start-up creates (EnsureDataDir).
func (c *Config) loadDatabaseURL(raw string, p *problems) {
	c.DatabaseURL = raw
	if raw == "" {
		if c.DataDir != "" {
			c.DatabaseURL = "sqlite:" + filepath.Join(c.DataDir, "gatehouse.db")
		}
		return
	}
	u := gormstore.DatabaseURL(raw)
	if _, _, err := gormstore.ParseDatabaseURL(u); err != nil {
		p.add("GATEHOUSE_DATABASE_URL", err.Error())
		return
	}
	if c.sqliteInDataDir() {
		return
	}
	if err := gormstore.CheckSQLiteDir(u); err != nil {
		p.add("GATEHOUSE_DATABASE_URL", err.Error()+" (Gatehouse creates GATEHOUSE_DATA_DIR only; create it, or leave GATEHOUSE_DATABASE_URL unset for DATA_DIR/gatehouse.db)")
	}
}

// sqliteInDataDir reports whether the database is a SQLite file directly
// in the data directory.
func (c Config) sqliteInDataDir() bool {
	path, ok := gormstore.SQLitePath(gormstore.DatabaseURL(c.DatabaseURL))
	return ok && c.DataDir != "" && filepath.Clean(filepath.Dir(path)) == filepath.Clean(c.DataDir)
}

// loadAuth reads the framework's settings.
func (c *Config) loadAuth(get func(string) string, p *problems) {
	var err error
	if c.TrustedProxies, err = parseProxies(get("GATEHOUSE_TRUSTED_PROXIES")); err != nil {
		p.add("GATEHOUSE_TRUSTED_PROXIES", err.Error())
	}
	switch get("GATEHOUSE_RATE_LIMIT") {
	case "on", "true":
		c.RateLimit = true
	case "off", "false":
	default:
		p.add("GATEHOUSE_RATE_LIMIT", "must be on or off")
	}
	if c.ServiceKeyLimit, c.ServiceKeyWindow, err = parseRate(get("GATEHOUSE_RATE_LIMIT_SERVICE_KEY")); err != nil {
		p.add("GATEHOUSE_RATE_LIMIT_SERVICE_KEY", err.Error())
	}
	durations := []struct {
		env      string
		dst      *time.Duration
		min, max time.Duration
	}{
		{"GATEHOUSE_SESSION_LIFETIME", &c.SessionLifetime, time.Minute, 400 * 24 * time.Hour},
		{"GATEHOUSE_SESSION_UPDATE_AGE", &c.SessionUpdateAge, 0, 400 * 24 * time.Hour},
		{"GATEHOUSE_SESSION_FRESH_AGE", &c.SessionFreshAge, 0, 400 * 24 * time.Hour},
		{"GATEHOUSE_LOCKOUT_COOLDOWN", &c.LockoutCooldown, time.Second, 30 * 24 * time.Hour},
		{"GATEHOUSE_IMPERSONATION_TTL", &c.ImpersonationTTL, time.Minute, 24 * time.Hour},
		{"GATEHOUSE_INVITATION_TTL", &c.InvitationTTL, time.Minute, 90 * 24 * time.Hour},
	}
	for _, d := range durations {
		v, err := time.ParseDuration(get(d.env))
		if err != nil || v < d.min || v > d.max {
			p.add(d.env, fmt.Sprintf("must be a duration from %s to %s, such as 24h", d.min, d.max))
			continue
		}
		*d.dst = v
	}
	ints := []struct {
		env      string
		dst      *int
		min, max int
	}{
		{"GATEHOUSE_PASSWORD_MIN_LENGTH", &c.PasswordMin, 8, 64},
		{"GATEHOUSE_PASSWORD_MAX_LENGTH", &c.PasswordMax, 64, 1024},
		{"GATEHOUSE_LOCKOUT_THRESHOLD", &c.LockoutThreshold, 0, 100},
		{"GATEHOUSE_SMTP_PORT", &c.SMTPPort, 1, 65535},
		{"GATEHOUSE_MAIL_QUEUE_SIZE", &c.MailQueue, 1, 1000000},
		{"GATEHOUSE_INVITATION_LIMIT", &c.InvitationLimit, 1, 100000},
		{"GATEHOUSE_MEMBERSHIP_LIMIT", &c.MembershipLimit, 0, 10000000},
		{"GATEHOUSE_ORGANIZATION_LIMIT", &c.OrganizationLimit, 0, 100000},
	}
	for _, n := range ints {
		v, err := strconv.Atoi(get(n.env))
		if err != nil || v < n.min || v > n.max {
			p.add(n.env, fmt.Sprintf("must be a whole number from %d to %d", n.min, n.max))
			continue
		}
		*n.dst = v
	}
	if c.RequireVerified, err = strconv.ParseBool(get("GATEHOUSE_REQUIRE_EMAIL_VERIFICATION")); err != nil {
		p.add("GATEHOUSE_REQUIRE_EMAIL_VERIFICATION", "must be true or false")
	}
	c.loadMail(get, p)
}

// loadMail reads the SMTP settings. With no SMTP host, development logs the
// links instead; production refuses.
func (c *Config) loadMail(get func(string) string, p *problems) {
	c.SMTPHost, c.SMTPUsername, c.SMTPPassword, c.MailFrom = get("GATEHOUSE_SMTP_HOST"), get("GATEHOUSE_SMTP_USERNAME"), get("GATEHOUSE_SMTP_PASSWORD"), get("GATEHOUSE_MAIL_FROM")
	switch c.SMTPTLS = get("GATEHOUSE_SMTP_TLS"); c.SMTPTLS {
	case "starttls", "tls", "none":
	default:
		p.add("GATEHOUSE_SMTP_TLS", "must be starttls, tls or none")
	}
	if _, err := mail.ParseAddress(c.MailFrom); err != nil {
		p.add("GATEHOUSE_MAIL_FROM", `must be an address, optionally as "Name <address>"`)
	}
	if c.SMTPPassword != "" && c.SMTPUsername == "" {
		p.add("GATEHOUSE_SMTP_USERNAME", "must be set when GATEHOUSE_SMTP_PASSWORD is")
	}
	switch {
	case c.SMTPHost == "" && c.Env == Production:
		p.add("GATEHOUSE_SMTP_HOST", "must be set in production: verification and reset mails must reach people")
	case c.SMTPHost == "" || p.has("GATEHOUSE_SMTP_TLS") || p.has("GATEHOUSE_SMTP_PORT") || p.has("GATEHOUSE_MAIL_FROM") || p.has("GATEHOUSE_SMTP_USERNAME"):
	case c.SMTPTLS == "none" && c.Env == Production && !mailer.IsLoopback(c.SMTPHost):
		// Credentials and reset links would cross the network in clear text.
		p.add("GATEHOUSE_SMTP_TLS", "none is allowed in production only with a loopback GATEHOUSE_SMTP_HOST (localhost, 127.0.0.1 or ::1); use starttls or tls")
	default:
		if _, err := mailer.NewSMTP(smtpConfig(*c)); err != nil {
			p.add("GATEHOUSE_SMTP_HOST", err.Error())
		}
	}
}

// loadAdmin reads the settings of administration and organizations.
func (c *Config) loadAdmin(get func(string) string, p *problems) {
	for _, e := range splitList(get("GATEHOUSE_ADMIN_EMAILS")) {
		email, err := domain.NewEmail(e)
		if err != nil {
			p.add("GATEHOUSE_ADMIN_EMAILS", fmt.Sprintf("entry %q is not an e-mail address", e))
			continue
		}
		c.AdminEmails = append(c.AdminEmails, string(email))
	}
	c.AdminUserIDs = splitList(get("GATEHOUSE_ADMIN_USER_IDS"))
	c.InvitationURL = get("GATEHOUSE_INVITATION_URL")
	switch {
	case c.InvitationURL == "" && c.Env == Production:
		p.add("GATEHOUSE_INVITATION_URL", "must be set in production: invitation mails link to the page of your application that accepts them")
		return
	case c.InvitationURL == "" && c.BaseURL == "":
		return // follows the base URL, which is wrong
	case c.InvitationURL == "":
		c.InvitationURL = c.BaseURL + "/accept-invitation/{id}"
	}
	if u, err := url.Parse(c.InvitationURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || !strings.Contains(c.InvitationURL, "{id}") {
		p.add("GATEHOUSE_INVITATION_URL", "must be an absolute http(s) URL containing {id}")
	}
}

// splitList splits a comma-separated setting, dropping blanks.
func splitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

func parseProxies(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if _, err := netip.ParsePrefix(p); err != nil {
			if _, err := netip.ParseAddr(p); err != nil {
				return nil, fmt.Errorf("entry %q is not an address or CIDR", p)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

func (c *Config) loadSecrets(single, list string, p *problems) {
	switch {
	case single != "" && list != "":
		p.add("GATEHOUSE_SECRETS", "set either GATEHOUSE_SECRET or GATEHOUSE_SECRETS, not both")
		return
	case single != "":
		c.Secrets, c.SecretSource = []string{single}, "GATEHOUSE_SECRET"
	case list != "":
		for s := range strings.SplitSeq(list, ",") {
			if s = strings.TrimSpace(s); s == "" {
				p.add("GATEHOUSE_SECRETS", "has an empty entry")
				c.Secrets = nil
				return
			}
			c.Secrets = append(c.Secrets, s)
		}
		c.SecretSource = "GATEHOUSE_SECRETS"
	}
	if len(c.Secrets) == 0 && c.Env == Production {
		p.add("GATEHOUSE_SECRET", "must be set in production (at least 32 bytes; e.g. openssl rand -base64 48)")
	}
	for _, s := range c.Secrets {
		if c.Env == Production && len(s) < MinSecretBytes {
			p.add(c.SecretSource, fmt.Sprintf("each secret must be at least %d bytes in production", MinSecretBytes))
			break
		}
	}
}

func parseBaseURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("must be an absolute http or https URL")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return "", errors.New("must be an origin (scheme, host and optional port) with no path, query or credentials")
	}
	return u.Scheme + "://" + u.Host, nil
}

// isHomeURL reports whether s may be where / redirects: an absolute http(s)
// URL without credentials that is not / here (which would loop).
func isHomeURL(s, base string) bool {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return false
	}
	return !strings.EqualFold(u.Scheme+"://"+u.Host, base) || (u.Path != "" && u.Path != "/")
}

func parseOrigins(s string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	var out []string
	for _, o := range strings.Split(s, ",") {
		norm, err := parseBaseURL(strings.TrimSpace(o))
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", len(out)+1, err)
		}
		out = append(out, norm)
	}
	return out, nil
}

func isToken(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// SessionCookieName is the session cookie's name for this configuration.
func (c Config) SessionCookieName() string {
	name := c.CookiePrefix + ".session_token"
	switch {
	case c.HostCookies:
		name = "__Host-" + name
	case strings.HasPrefix(c.BaseURL, "https://"):
		name = "__Secure-" + name
	}
	return name
}

// Settings describes every setting, for documentation.
func Settings() [][4]string {
	out := make([][4]string, len(settings))
	for i, s := range settings {
		out[i] = [4]string{s.env, "--" + s.flag, s.def, s.usage}
	}
	return out
}

// parseRate reads a budget written N/DURATION, such as 6000/1m.
func parseRate(v string) (int, time.Duration, error) {
	errRate := errors.New("must be a number of requests from 1 to 1000000 per a duration from 1s to 24h, such as 6000/1m")
	n, d, ok := strings.Cut(v, "/")
	if !ok {
		return 0, 0, errRate
	}
	limit, err := strconv.Atoi(strings.TrimSpace(n))
	if err != nil || limit < 1 || limit > 1_000_000 {
		return 0, 0, errRate
	}
	window, err := time.ParseDuration(strings.TrimSpace(d))
	if err != nil || window < time.Second || window > 24*time.Hour {
		return 0, 0, errRate
	}
	return limit, window, nil
}
