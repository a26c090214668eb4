package framework

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure the default rate limits (better-auth-wire §4): three sign-ins per
// 10 s and three mails per 60 s from one address; forwarding headers count
// only from trusted proxies, and X-Real-IP never; liveness is never limited.
// It keeps a fresh application: it counts its address's rate-limit budget.
func TestFramework_rate_limits(t *testing.T) {
	t.Parallel()
	signIn := func(t *testing.T, app *harness.App, headers ...string) *harness.Response {
		return app.NewClient(t).Post("/api/auth/sign-in/email", harness.MustCredentials(t, "nobody@example.com", "correct horse battery"), headers...)
	}
	t.Run("fourth_sign_in_in_10s", func(t *testing.T) {
		t.Parallel()
		app := harness.MustStart(t, harness.StoreMemory, nil)
		for i := 0; i < 3; i++ {
			harness.MustCode(t, signIn(t, app), http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
		}
		harness.MustRateLimited(t, signIn(t, app), 10)
		// Other routes have their own budget.
		harness.MustStatus(t, app.NewClient(t).Get("/api/auth/get-session"), http.StatusOK)
	})
	t.Run("forged_forwarded_for_does_not_help", func(t *testing.T) {
		t.Parallel()
		app := harness.MustStart(t, harness.StoreMemory, nil)
		for i := 0; i < 3; i++ {
			harness.MustCode(t, signIn(t, app, "X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i), "X-Real-IP", fmt.Sprintf("203.0.113.%d", i)),
				http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
		}
		harness.MustRateLimited(t, signIn(t, app, "X-Forwarded-For", "198.51.100.99", "X-Real-IP", "203.0.113.99"), 10)
	})
	t.Run("trusted_proxy_separates_clients", func(t *testing.T) {
		t.Parallel()
		app := harness.MustStart(t, harness.StoreMemory, map[string]string{"GATEHOUSE_TRUSTED_PROXIES": "127.0.0.1/32"})
		for i := 0; i < 4; i++ {
			harness.MustCode(t, signIn(t, app, "X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i)), http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
		}
		for i := 0; i < 2; i++ {
			harness.MustCode(t, signIn(t, app, "X-Forwarded-For", "198.51.100.0"), http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
		}
		harness.MustRateLimited(t, signIn(t, app, "X-Forwarded-For", "198.51.100.0"), 10)
		harness.MustCode(t, signIn(t, app, "X-Forwarded-For", "198.51.100.200"), http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
	})
	t.Run("real_ip_from_trusted_proxy_is_ignored", func(t *testing.T) {
		t.Parallel()
		app := harness.MustStart(t, harness.StoreMemory, map[string]string{"GATEHOUSE_TRUSTED_PROXIES": "127.0.0.1/32"})
		for i := 0; i < 3; i++ {
			harness.MustCode(t, signIn(t, app, "X-Real-IP", fmt.Sprintf("203.0.113.%d", i)), http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
		}
		harness.MustRateLimited(t, signIn(t, app, "X-Real-IP", "203.0.113.99"), 10)
		// Beside X-Forwarded-For it changes nothing either: the hop the
		// proxy appended is the client.
		harness.MustCode(t, signIn(t, app, "X-Forwarded-For", "198.51.100.7", "X-Real-IP", "203.0.113.99"), http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
	})
	t.Run("fourth_reset_request_in_60s", func(t *testing.T) {
		t.Parallel()
		app := harness.MustStart(t, harness.StoreMemory, nil)
		body := harness.MustJSON(t, map[string]string{"email": "nobody@example.com"})
		for i := 0; i < 3; i++ {
			harness.MustStatusTrue(t, app.NewClient(t).Post("/api/auth/request-password-reset", body))
		}
		harness.MustRateLimited(t, app.NewClient(t).Post("/api/auth/request-password-reset", body), 60)
	})
	t.Run("ok_is_never_limited", func(t *testing.T) {
		t.Parallel()
		app := harness.MustStart(t, harness.StoreMemory, nil)
		for i := 0; i < 150; i++ {
			harness.MustStatus(t, app.NewClient(t).Get("/api/auth/ok"), http.StatusOK)
		}
	})
}
