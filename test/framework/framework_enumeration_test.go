package framework

import (
	"maps"
	"net/http"
	"slices"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure no answer reveals whether an address has an account: sign-in with
// an unknown address and with a wrong password, password-reset requests,
// and (with verification required) sign-ups for new and taken addresses
// answer alike; only the address's owner learns of it by mail.
// It keeps a fresh application: it is an enumeration test, with production hashing.
func TestFramework_no_account_enumeration(t *testing.T) {
	t.Parallel()
	harness.ForStores(t, harness.StoresOnce, harness.Env(map[string]string{"GATEHOUSE_RATE_LIMIT": "off"}, harness.ProductionHashing), func(t *testing.T, app *harness.App) {
		const owner, pw = "ada@example.com", "correct horse battery"
		c := app.NewClient(t)

		fresh := harness.MustOK(t, c.Post("/api/auth/sign-up/email", harness.MustJSON(t, map[string]string{"name": "Ada", "email": owner, "password": pw})))
		harness.MustLink(t, app, owner, "Verify your email address")
		taken := harness.MustOK(t, c.Post("/api/auth/sign-up/email", harness.MustJSON(t, map[string]string{"name": "Mallory", "email": owner, "password": "another good passphrase"})))
		for _, body := range []map[string]any{fresh, taken} {
			if v, ok := body["token"]; !ok || v != nil {
				t.Fatalf("sign-up token = %v, want null", v)
			}
		}
		fu, tu := fresh["user"].(map[string]any), taken["user"].(map[string]any)
		if !slices.Equal(slices.Sorted(maps.Keys(fu)), slices.Sorted(maps.Keys(tu))) || tu["email"] != owner || tu["emailVerified"] != false {
			t.Fatalf("taken sign-up user %v differs in shape from new one %v", tu, fu)
		}
		app.Mail.WaitFor(t, owner, "Someone tried to sign up", harness.MailWait)
		// The attempt changed nothing: the owner's password still works
		// (and is still waiting for verification).
		harness.MustCode(t, c.Post("/api/auth/sign-in/email", harness.MustCredentials(t, owner, pw)), http.StatusForbidden, "EMAIL_NOT_VERIFIED")
		harness.MustSignInFails(t, app, owner, "another good passphrase")

		unknown := c.Post("/api/auth/sign-in/email", harness.MustCredentials(t, "nobody@example.com", pw))
		wrong := c.Post("/api/auth/sign-in/email", harness.MustCredentials(t, owner, "wrong password"))
		harness.MustCode(t, unknown, http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
		if unknown.Status != wrong.Status || string(unknown.Body) != string(wrong.Body) {
			t.Fatalf("unknown address: %d %s; wrong password: %d %s", unknown.Status, unknown.Body, wrong.Status, wrong.Body)
		}

		resetUnknown := c.Post("/api/auth/request-password-reset", harness.MustJSON(t, map[string]string{"email": "nobody@example.com", "redirectTo": "/reset"}))
		resetKnown := c.Post("/api/auth/request-password-reset", harness.MustJSON(t, map[string]string{"email": owner, "redirectTo": "/reset"}))
		harness.MustStatusTrue(t, resetKnown)
		if resetUnknown.Status != resetKnown.Status || string(resetUnknown.Body) != string(resetKnown.Body) {
			t.Fatalf("reset for unknown: %d %s; known: %d %s", resetUnknown.Status, resetUnknown.Body, resetKnown.Status, resetKnown.Body)
		}
		harness.MustLink(t, app, owner, "Reset your")
		harness.MustNoMail(t, app, "nobody@example.com", "")
	})
}

// Ensure that without required verification a taken address is refused as
// Better Auth does (422), and the refused sign-up changes nothing.
func TestFramework_sign_up_taken_address_without_verification(t *testing.T) {
	t.Parallel()
	app := harness.Shared(t, harness.StoreMemory, harness.FwQuick)
	harness.MustSignUp(t, app.NewClient(t), "Ada", harness.Email(t, "ada@example.com"), "correct horse battery")
	r := app.NewClient(t).Post("/api/auth/sign-up/email", harness.MustJSON(t, map[string]string{"name": "Mallory", "email": harness.Email(t, "ADA@example.com"), "password": "another good passphrase"}))
	harness.MustCode(t, r, http.StatusUnprocessableEntity, "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL")
	if len(harness.SetCookies(r)) != 0 {
		t.Fatalf("refused sign-up sets cookies: %q", r.Header.Values("Set-Cookie"))
	}
	harness.MustSignIn(t, app.NewClient(t), harness.Email(t, "ada@example.com"), "correct horse battery")
	harness.MustSignInFails(t, app, harness.Email(t, "ada@example.com"), "another good passphrase")
}
