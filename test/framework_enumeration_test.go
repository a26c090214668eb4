package test

import (
	"maps"
	"net/http"
	"slices"
	"testing"
)

// Ensure no answer reveals whether an address has an account: sign-in with
// an unknown address and with a wrong password, password-reset requests,
// and (with verification required) sign-ups for new and taken addresses
// answer alike; only the address's owner learns of it by mail.
func TestFramework_no_account_enumeration(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, map[string]string{"GATEHOUSE_RATE_LIMIT": "off"}, func(t *testing.T, app *fwApp) {
		const owner, pw = "ada@example.com", "correct horse battery"
		c := app.client(t)

		fresh := mustOK(t, c.post("/api/auth/sign-up/email", mustJSON(t, map[string]string{"name": "Ada", "email": owner, "password": pw})))
		mustLink(t, app, owner, "Verify your email address")
		taken := mustOK(t, c.post("/api/auth/sign-up/email", mustJSON(t, map[string]string{"name": "Mallory", "email": owner, "password": "another good passphrase"})))
		for _, body := range []map[string]any{fresh, taken} {
			if v, ok := body["token"]; !ok || v != nil {
				t.Fatalf("sign-up token = %v, want null", v)
			}
		}
		fu, tu := fresh["user"].(map[string]any), taken["user"].(map[string]any)
		if !slices.Equal(slices.Sorted(maps.Keys(fu)), slices.Sorted(maps.Keys(tu))) || tu["email"] != owner || tu["emailVerified"] != false {
			t.Fatalf("taken sign-up user %v differs in shape from new one %v", tu, fu)
		}
		app.Mail.WaitFor(t, owner, "Someone tried to sign up", mailWait)
		// The attempt changed nothing: the owner's password still works
		// (and is still waiting for verification).
		mustCode(t, c.post("/api/auth/sign-in/email", mustCredentials(t, owner, pw)), http.StatusForbidden, "EMAIL_NOT_VERIFIED")
		mustSignInFails(t, app, owner, "another good passphrase")

		unknown := c.post("/api/auth/sign-in/email", mustCredentials(t, "nobody@example.com", pw))
		wrong := c.post("/api/auth/sign-in/email", mustCredentials(t, owner, "wrong password"))
		mustCode(t, unknown, http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
		if unknown.Status != wrong.Status || string(unknown.Body) != string(wrong.Body) {
			t.Fatalf("unknown address: %d %s; wrong password: %d %s", unknown.Status, unknown.Body, wrong.Status, wrong.Body)
		}

		resetUnknown := c.post("/api/auth/request-password-reset", mustJSON(t, map[string]string{"email": "nobody@example.com", "redirectTo": "/reset"}))
		resetKnown := c.post("/api/auth/request-password-reset", mustJSON(t, map[string]string{"email": owner, "redirectTo": "/reset"}))
		mustStatusTrue(t, resetKnown)
		if resetUnknown.Status != resetKnown.Status || string(resetUnknown.Body) != string(resetKnown.Body) {
			t.Fatalf("reset for unknown: %d %s; known: %d %s", resetUnknown.Status, resetUnknown.Body, resetKnown.Status, resetKnown.Body)
		}
		mustLink(t, app, owner, "Reset your")
		mustNoMail(t, app, "nobody@example.com", "")
	})
}

// Ensure that without required verification a taken address is refused as
// Better Auth does (422), and the refused sign-up changes nothing.
func TestFramework_sign_up_taken_address_without_verification(t *testing.T) {
	t.Parallel()
	app := mustStartFramework(t, storeMemory, fwQuick)
	mustSignUp(t, app.client(t), "Ada", "ada@example.com", "correct horse battery")
	r := app.client(t).post("/api/auth/sign-up/email", mustJSON(t, map[string]string{"name": "Mallory", "email": "ADA@example.com", "password": "another good passphrase"}))
	mustCode(t, r, http.StatusUnprocessableEntity, "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL")
	if len(setCookies(r)) != 0 {
		t.Fatalf("refused sign-up sets cookies: %q", r.Header.Values("Set-Cookie"))
	}
	mustSignIn(t, app.client(t), "ada@example.com", "correct horse battery")
	mustSignInFails(t, app, "ada@example.com", "another good passphrase")
}
