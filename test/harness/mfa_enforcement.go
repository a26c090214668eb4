package harness

import (
	"fmt"
	"testing"
)

// Multi-factor enforcement and step-up (docs/multi-factor.md,
// "Enforcement" and "Step-up"), from outside: sensitive actions ask a user
// with a second factor to have proven it recently, administrators without
// one are refused the administration routes while the configuration
// requires it, and an organization can require its members to have one.

const TrustCookie = "gatehouse.trust_device"

// MustStaleSession returns a client signed in as u by password alone: the
// browser was trusted at a challenge answered with the code of the current
// step (so a later verify must use the next one), and its next sign-in
// skips the challenge, so the session holds no second factor.
func MustStaleSession(t *testing.T, app *App, u *TfUser) *Client {
	t.Helper()
	c := MustChallenge(t, app, u)
	MustOK(t, c.Post("/api/auth/two-factor/verify-totp", MustJSON(t, map[string]any{"code": TOTPAt(app.Clock, u.Secret, 0), "trustDevice": true})))
	s := app.NewClient(t)
	s.Cookies[TrustCookie] = c.Cookies[TrustCookie]
	MustSignIn(t, s, u.Email, TfPassword)
	if m, at, _, _ := SessionFactors(t, s); fmt.Sprint(m) != "[pwd]" || at != nil {
		t.Fatalf("trusted-browser session: authMethods %v, secondFactorAt %v; want a password alone", m, at)
	}
	return s
}

// MustEnrolTOTP turns two-factor on for c's signed-in user (password pw)
// with the code of the previous step, and returns the TOTP secret. The
// session is stepped up by the answer.
func MustEnrolTOTP(t *testing.T, c *Client, pw string) []byte {
	t.Helper()
	en := MustOK(t, c.Post("/api/auth/two-factor/enable", MustJSON(t, map[string]any{"password": pw})))
	uri, _ := en["totpURI"].(string)
	secret := TOTPSecretOf(t, uri)
	MustOK(t, c.Post("/api/auth/two-factor/verify-totp", MustJSON(t, map[string]any{"code": TOTPAt(c.App.Clock, secret, -1)})))
	return secret
}
