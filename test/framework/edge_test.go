package framework

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure unknown routes and wrong methods answer as each contract promises:
// an empty 404 under /api/auth (as Better Auth does), a problem elsewhere.
func TestEdge_unknown_routes(t *testing.T) {
	app := harness.Shared(t, harness.StoreMemory, nil)
	tests := []struct {
		name, method, path string
		status             int
		code               string // "" means an empty body
	}{
		{"framework_unknown_path", http.MethodGet, "/api/auth/no-such-route", 404, ""},
		{"framework_wrong_method", http.MethodPost, "/api/auth/ok", 404, ""},
		{"framework_trailing_slash", http.MethodGet, "/api/auth/ok/", 404, ""},
		{"service_unknown_path", http.MethodGet, "/api/no-such-route", 404, "route.not_found"},
		{"service_wrong_method", http.MethodDelete, "/api/health/ready", 405, "route.method_not_allowed"},
		{"root_unknown_path", http.MethodGet, "/nothing-here", 404, "route.not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := app.Do(t, tt.method, tt.path, "")
			harness.MustStatus(t, r, tt.status)
			if tt.code == "" {
				if len(r.Body) != 0 {
					t.Fatalf("body = %q, want empty", r.Body)
				}
				return
			}
			harness.MustProblem(t, r, tt.status, tt.code)
		})
	}
}

// Ensure a caller's request id is adopted only when short and safe.
func TestEdge_request_id(t *testing.T) {
	app := harness.Shared(t, harness.StoreMemory, nil)
	tests := []struct {
		name, sent string
		adopted    bool
	}{
		{"safe_id_is_echoed", "req-123_abc.DEF:9", true},
		{"absent_id_is_generated", "", false},
		{"overlong_id_is_replaced", strings.Repeat("a", 65), false},
		{"unsafe_characters_are_replaced", "abc def\"<x>", false},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := app.Do(t, http.MethodGet, "/api/auth/ok", "", "X-Request-Id", tt.sent)
			got := r.Header.Get("X-Request-Id")
			if tt.adopted != (got == tt.sent) {
				t.Fatalf("X-Request-Id = %q for sent %q, adopted want %v", got, tt.sent, tt.adopted)
			}
			if got == "" || seen[got] {
				t.Fatalf("request id %q empty or reused", got)
			}
			seen[got] = true
		})
	}
}

// Ensure bodies over the limit get 413 before anything reads them, in each
// contract's error shape.
// It keeps a fresh application: it has a body limit of its own.
func TestEdge_body_limit(t *testing.T) {
	app := harness.MustStart(t, harness.StoreMemory, map[string]string{"GATEHOUSE_MAX_BODY_BYTES": "2048"})
	big := `{"x":"` + strings.Repeat("a", 4096) + `"}`

	r := app.Do(t, http.MethodPost, "/api/health/ready", big)
	harness.MustStatus(t, r, http.StatusRequestEntityTooLarge)
	harness.MustProblem(t, r, 413, "request.too_large")

	r = app.Do(t, http.MethodPost, "/api/auth/ok", big)
	harness.MustStatus(t, r, http.StatusRequestEntityTooLarge)
	if body := r.JSON(t); body["code"] != "PAYLOAD_TOO_LARGE" || body["message"] == "" {
		t.Fatalf("framework 413 body = %s", r.Body)
	}
}

// Ensure every response carries the security headers, and that API answers
// are never cached.
func TestEdge_security_headers(t *testing.T) {
	app := harness.Shared(t, harness.StoreMemory, nil)
	paths := []string{"/api/auth/ok", "/api/health/ready", "/api/auth-openapi.json", "/api/docs", "/api/auth/missing", "/api/missing"}
	for _, p := range paths {
		t.Run(strings.ReplaceAll(p, "/", "_"), func(t *testing.T) {
			r := app.Do(t, http.MethodGet, p, "")
			h := r.Header
			if h.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q", h.Get("X-Content-Type-Options"))
			}
			csp := h.Get("Content-Security-Policy")
			for _, d := range []string{"frame-ancestors 'none'", "base-uri 'none'", "default-src 'none'"} {
				if !strings.Contains(csp, d) {
					t.Errorf("CSP %q lacks %s", csp, d)
				}
			}
			if h.Get("Referrer-Policy") == "" {
				t.Error("no Referrer-Policy")
			}
			if h.Get("Strict-Transport-Security") != "" {
				t.Error("HSTS sent for an http base URL")
			}
			if strings.HasPrefix(p, "/api/auth/") || p == "/api/health/ready" {
				if h.Get("Cache-Control") != "no-store" {
					t.Errorf("Cache-Control = %q, want no-store", h.Get("Cache-Control"))
				}
			}
		})
	}
	t.Run("https_base_url_sends_hsts", func(t *testing.T) {
		app := harness.MustStart(t, harness.StoreMemory, map[string]string{"GATEHOUSE_BASE_URL": "https://id.example.com"})
		hsts := app.Do(t, http.MethodGet, "/api/auth/ok", "").Header.Get("Strict-Transport-Security")
		if !strings.Contains(hsts, "max-age=31536000") {
			t.Fatalf("HSTS = %q", hsts)
		}
	})
}

// Ensure the access log records requests but never cookies, keys, tokens,
// passwords or bodies.
// It keeps a fresh application: it reads the whole application's log.
func TestEdge_logs_hold_no_secrets(t *testing.T) {
	app := harness.MustStart(t, harness.StoreMemory, nil)
	secrets := []string{"cookie-secret-value", "bearer-secret-value", "apikey-secret-value", "password-secret-value", "query-secret-value", "path-secret-value"}
	app.Do(t, http.MethodPost, "/api/auth/sign-in/email?token=query-secret-value", `{"email":"a@example.com","password":"password-secret-value"}`,
		"Cookie", "gatehouse.session_token=cookie-secret-value",
		"Authorization", "Bearer bearer-secret-value",
		"x-api-key", "apikey-secret-value")
	app.Do(t, http.MethodGet, "/api/auth/reset-password/path-secret-value", "")
	app.Do(t, http.MethodGet, "/api/auth/ok?token=query-secret-value", "")
	logs := app.Logs.String()
	if !strings.Contains(logs, `"route":"/api/auth/ok"`) {
		t.Fatalf("access log lacks the request:\n%s", logs)
	}
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			t.Fatalf("log contains %q:\n%s", s, logs)
		}
	}
}

// Ensure each log line names its request once (the request's logger already
// carries request_id) and gives durations in milliseconds, the unit in the
// key.
// It keeps a fresh application: it has settings of its own (no SMTP), and reads the whole application's log.
func TestEdge_log_lines(t *testing.T) {
	// No SMTP server: the development mailer writes the mail to the log.
	app := harness.MustStart(t, harness.StoreMemory, map[string]string{"GATEHOUSE_RATE_LIMIT": "off", "GATEHOUSE_SMTP_HOST": ""})
	// A sign-up mails a link (written to the log without SMTP), a call
	// without a key and a hostile body are refused at warn.
	harness.MustStatus(t, app.Do(t, http.MethodPost, "/api/auth/sign-up/email", `{"email":"ada@example.com","name":"Ada","password":"correct horse battery"}`), http.StatusOK)
	harness.MustStatus(t, app.Do(t, http.MethodGet, harness.UsersPath, ""), http.StatusUnauthorized)
	harness.MustStatus(t, app.Do(t, http.MethodPost, "/api/auth/sign-in/email", `{"email":"a\u0000@example.com","password":"x"}`), http.StatusBadRequest)
	logs := mustLogLine(t, app, `"msg":"mail (development mailer: not sent)"`)

	var warned, timed int
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var entry map[string]any
		harness.MustUnmarshal(t, []byte(line), &entry)
		n := strings.Count(line, `"request_id":`)
		if n > 1 {
			t.Fatalf("request_id %d times: %s", n, line)
		}
		if (entry["level"] == "WARN" || entry["level"] == "ERROR") && entry["msg"] == "request failed" {
			warned++
			if n != 1 {
				t.Fatalf("request_id %d times: %s", n, line)
			}
		}
		for k, v := range entry {
			if _, isNumber := v.(float64); !isNumber {
				continue
			}
			for _, unit := range []string{"duration", "elapsed", "latency", "timeout", "expires", "took"} {
				if strings.Contains(k, unit) && !strings.HasSuffix(k, "_ms") {
					t.Fatalf("duration %s without its unit: %s", k, line)
				}
			}
			if strings.HasSuffix(k, "_ms") {
				timed++
			}
		}
	}
	if warned < 2 || timed < 4 {
		t.Fatalf("%d refusals logged, %d durations in ms; want at least 2 and 4:\n%s", warned, timed, logs)
	}
}

// mustLogLine waits until app has logged a line containing s (mail is sent
// from a queue) and returns the whole log.
func mustLogLine(t testing.TB, app *harness.App, s string) string {
	t.Helper()
	for range 500 {
		if logs := app.Logs.String(); strings.Contains(logs, s) {
			return logs
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("log lacks %s:\n%s", s, app.Logs.String())
	return ""
}
