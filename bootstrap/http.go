package bootstrap

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/gatehouse/gatehouse/adapters/httpapi"
	"github.com/gatehouse/gatehouse/adapters/metrics"
)

// HTTPConfig is the HTTP server's section: where it listens and what it
// answers as, its cookies, origins, proxies and limits, how it logs and how
// long it takes to stop.
type HTTPConfig struct {
	BaseURL string // public origin, no trailing slash
	// BaseURLFollowsAddr reports that the base URL was not set and was
	// derived from Addr (development only; see DefaultBaseURL).
	BaseURLFollowsAddr bool
	HomeURL            string // where / redirects; "" shows the home page
	Addr               string
	TrustedOrigins     []string
	CookiePrefix       string
	HostCookies        bool // __Host- cookie names on https
	LogLevel           slog.Level
	MaxBodyBytes       int64
	ShutdownTimeout    time.Duration
	TrustedProxies     []string
	RateLimit          bool
	// ServiceKeyLimit requests per ServiceKeyWindow are allowed to each
	// service key on the trusted routes.
	ServiceKeyLimit  int
	ServiceKeyWindow time.Duration
}

var httpSettingList settingList

var (
	settingBaseURL          = httpSettingList.add("GATEHOUSE_BASE_URL", "base-url", "", "public URL of the service; must be set, https, in production (development default: http://localhost:PORT, following GATEHOUSE_ADDR)")
	settingHomeURL          = httpSettingList.add("GATEHOUSE_HOME_URL", "home-url", "", "absolute http(s) URL that / redirects to, such as your product's site (empty: / shows Gatehouse's own home page)")
	settingAddr             = httpSettingList.add("GATEHOUSE_ADDR", "addr", ":8080", "listen address")
	settingTrustedOrigins   = httpSettingList.add("GATEHOUSE_TRUSTED_ORIGINS", "trusted-origins", "", "comma-separated origins allowed to call the framework from browsers")
	settingCookiePrefix     = httpSettingList.add("GATEHOUSE_COOKIE_PREFIX", "cookie-prefix", "gatehouse", "prefix of cookie names (better-auth lets a Better Auth deployment move over)")
	settingCookieHostPrefix = httpSettingList.addBool("GATEHOUSE_COOKIE_HOST_PREFIX", "cookie-host-prefix", "false", "true: on https, cookies are named __Host- instead of __Secure- (no sibling subdomain can set them; Better Auth's getSessionCookie no longer finds them)")
	settingLogLevel         = httpSettingList.add("GATEHOUSE_LOG_LEVEL", "log-level", "info", "debug, info, warn or error")
	settingMaxBodyBytes     = httpSettingList.add("GATEHOUSE_MAX_BODY_BYTES", "max-body-bytes", "1048576", "largest request body accepted (413 above)")
	settingShutdownTimeout  = httpSettingList.add("GATEHOUSE_SHUTDOWN_TIMEOUT", "shutdown-timeout", "20s", "how long SIGTERM waits for in-flight requests")
	settingTrustedProxies   = httpSettingList.add("GATEHOUSE_TRUSTED_PROXIES", "trusted-proxies", "", "comma-separated proxy addresses or CIDRs whose X-Forwarded-For is believed (none by default; X-Real-IP never is)")
	settingRateLimit        = httpSettingList.addBool("GATEHOUSE_RATE_LIMIT", "rate-limit", "on", "on or off: rate limits (per address on the framework, admin API and pages; per service key on the trusted API; see docs/security.md)")
	settingServiceKeyRate   = httpSettingList.add("GATEHOUSE_RATE_LIMIT_SERVICE_KEY", "rate-limit-service-key", "6000/1m", "requests each service key may make to the trusted API per window, as N/DURATION")
)

func (h *HTTPConfig) load(r *reader) {
	if h.Addr = r.text(settingAddr); h.Addr == "" {
		r.fail(settingAddr, "must not be empty")
	} else if err := checkAddr(h.Addr); err != nil {
		r.fail(settingAddr, err.Error())
	}
	h.loadBaseURL(r)
	if h.HomeURL = r.text(settingHomeURL); h.HomeURL != "" && !isHomeURL(h.HomeURL, h.BaseURL) {
		r.fail(settingHomeURL, "must be an absolute http(s) URL other than the base URL itself")
	}
	h.TrustedOrigins = parsed(r, settingTrustedOrigins, parseOrigins)
	if h.CookiePrefix = r.text(settingCookiePrefix); !isToken(h.CookiePrefix) {
		r.fail(settingCookiePrefix, "must be letters, digits, '-', '_' or '.'")
	}
	h.HostCookies = r.switched(settingCookieHostPrefix, []string{"true", "on"}, []string{"false", "off"}, "must be true or false")
	if h.HostCookies && h.BaseURL != "" && !strings.HasPrefix(h.BaseURL, "https://") {
		r.fail(settingCookieHostPrefix, "needs an https "+settingBaseURL.env+": browsers keep __Host- cookies only from secure origins")
	}
	if err := h.LogLevel.UnmarshalText([]byte(r.text(settingLogLevel))); err != nil {
		r.fail(settingLogLevel, "must be debug, info, warn or error")
	}
	if n, err := strconv.ParseInt(r.text(settingMaxBodyBytes), 10, 64); err != nil || n < 1024 || n > 64<<20 {
		r.fail(settingMaxBodyBytes, "must be a whole number of bytes from 1024 to 67108864")
	} else {
		h.MaxBodyBytes = n
	}
	h.ShutdownTimeout = r.durationOr(settingShutdownTimeout, 1, math.MaxInt64, "must be a positive duration such as 20s")
	h.TrustedProxies = parsed(r, settingTrustedProxies, parseProxies)
	h.RateLimit = r.switched(settingRateLimit, []string{"on", "true"}, []string{"off", "false"}, "must be on or off")
	var err error
	if h.ServiceKeyLimit, h.ServiceKeyWindow, err = parseRate(r.text(settingServiceKeyRate)); err != nil {
		r.fail(settingServiceKeyRate, err.Error())
	}
}

// loadBaseURL reads the public URL. Unset, development follows the listen
// address; production must name its https origin.
func (h *HTTPConfig) loadBaseURL(r *reader) {
	switch raw := r.text(settingBaseURL); {
	case raw == "" && r.production():
		r.fail(settingBaseURL, "must be set in production, an https URL")
	case raw == "":
		if h.Addr != "" && !r.failed(settingAddr) {
			h.BaseURL, _ = DefaultBaseURL(h.Addr)
			h.BaseURLFollowsAddr = true
		}
	default:
		base, err := parseBaseURL(raw)
		switch {
		case err != nil:
			r.fail(settingBaseURL, err.Error())
		case r.production() && !strings.HasPrefix(base, "https://"):
			r.fail(settingBaseURL, "must be an https URL in production")
		default:
			h.BaseURL = base
		}
	}
}

// FollowingBaseURL returns getenv with the base URL set to base, for a
// development service whose base URL follows the address the kernel picked
// for port 0: loading the configuration again with it makes what derives
// from the base URL follow too.
func FollowingBaseURL(getenv func(string) string, base string) func(string) string {
	return func(k string) string {
		if k == settingBaseURL.env {
			return base
		}
		return getenv(k)
	}
}

// AddrSetting returns the listen address's variable, flag and default, for
// a command that reads the address alone, without loading the rest of the
// configuration (gatehouse healthcheck).
func AddrSetting() (env, flag, def string) { return settingAddr.env, settingAddr.flag, settingAddr.def }

// AddrError reports a problem with the listen address found after loading
// (already in use, say), naming its flag if it came from the command line.
func (c Config) AddrError(msg string) *ConfigError { return c.settingError(settingAddr, msg) }

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

// SessionCookieName is the session cookie's name for this configuration.
func (c Config) SessionCookieName() string {
	name := c.HTTP.CookiePrefix + ".session_token"
	switch {
	case c.HTTP.HostCookies:
		name = "__Host-" + name
	case strings.HasPrefix(c.HTTP.BaseURL, "https://"):
		name = "__Secure-" + name
	}
	return name
}

// httpConfig is the edge's configuration; m counts requests when metrics
// are on, and tp traces them when tracing is.
func httpConfig(c Config, m *metrics.Metrics, tp trace.TracerProvider) httpapi.Config {
	h := c.HTTP
	cfg := httpapi.Config{BaseURL: h.BaseURL, HomeURL: h.HomeURL, Version: Version, MaxBodyBytes: h.MaxBodyBytes, SessionCookieName: c.SessionCookieName(),
		Secrets: c.Secrets, CookiePrefix: h.CookiePrefix, HostCookies: h.HostCookies, TrustedOrigins: h.TrustedOrigins, TrustedProxies: h.TrustedProxies, RateLimit: h.RateLimit,
		ServiceKeyLimit: h.ServiceKeyLimit, ServiceKeyWindow: h.ServiceKeyWindow, Tracer: tp, ConsoleIdleTimeout: c.Admin.ConsoleIdleTimeout}
	if m != nil {
		cfg.Observer = m
	}
	return cfg
}

// NewLogger returns the JSON logger every part of Gatehouse logs through.
// Each line logged with a request's context carries its request_id (and
// trace_id and span_id when tracing is on).
func NewLogger(c Config, w interface{ Write([]byte) (int, error) }) *slog.Logger {
	return slog.New(httpapi.LogHandler(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: c.HTTP.LogLevel})))
}
