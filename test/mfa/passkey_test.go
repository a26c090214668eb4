package mfa

import (
	"encoding/base64"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

func authMethods(t testing.TB, c *harness.Client) []string {
	t.Helper()
	s, _ := harness.MustSession(t, c)["session"].(map[string]any)
	var out []string
	for _, m := range s["authMethods"].([]any) {
		out = append(out, m.(string))
	}
	return out
}

func TestPasskey_register_sign_in_and_manage(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.PkEnv, func(t *testing.T, app *harness.App) {
		c := app.NewClient(t)
		harness.MustSignUp(t, c, "Ada", harness.Email(t, "ada@example.com"), harness.TfPassword)

		opts := c.Get("/api/auth/passkey/generate-register-options")
		o := harness.MustOK(t, opts)
		if rp := o["rp"].(map[string]any); rp["id"] != "localhost" || rp["name"] != "Gatehouse" {
			t.Fatalf("rp = %v", rp)
		}
		sel := o["authenticatorSelection"].(map[string]any)
		if sel["userVerification"] != "required" || sel["residentKey"] != "required" {
			t.Fatalf("authenticatorSelection = %v, want user verification and a discoverable key required", sel)
		}
		ck := harness.SetCookies(opts)["better-auth.better-auth-passkey"]
		if ck == nil {
			for name, v := range harness.SetCookies(opts) {
				if strings.HasSuffix(name, ".better-auth-passkey") {
					ck = v
				}
			}
		}
		if ck == nil || ck.MaxAge != 300 || !ck.HttpOnly {
			t.Fatalf("challenge cookie = %+v, want HttpOnly with Max-Age 300", ck)
		}

		d := harness.NewDevice()
		row := harness.MustOK(t, c.Post("/api/auth/passkey/verify-registration", harness.PkBody(t, d.Attest(t, opts), "name", "  Laptop ")))
		if row["name"] != "Laptop" || row["credentialID"] != d.CredentialID() || row["id"] != d.CredentialID() ||
			row["deviceType"] != "singleDevice" || row["backedUp"] != false || row["counter"] != float64(0) {
			t.Fatalf("registered passkey = %v", row)
		}
		if _, err := base64.StdEncoding.DecodeString(row["publicKey"].(string)); err != nil {
			t.Fatalf("publicKey %v is not standard base64: %v", row["publicKey"], err)
		}

		var list []map[string]any
		harness.MustUnmarshal(t, c.Get("/api/auth/passkey/list-user-passkeys").Body, &list)
		if len(list) != 1 || list[0]["id"] != d.CredentialID() {
			t.Fatalf("list = %v", list)
		}
		renamed := harness.MustOK(t, c.Post("/api/auth/passkey/update-passkey", harness.MustJSON(t, map[string]any{"id": d.CredentialID(), "name": "Work laptop"})))
		if p := renamed["passkey"].(map[string]any); p["name"] != "Work laptop" {
			t.Fatalf("update-passkey = %v", renamed)
		}

		harness.MustOK(t, c.Post("/api/auth/sign-out", "{}"))
		harness.MustNoSession(t, c)

		// Signed out: a discoverable ceremony, then a complete sign-in.
		auth := c.Get("/api/auth/passkey/generate-authenticate-options")
		if a := harness.MustOK(t, auth); a["rpId"] != "localhost" || a["allowCredentials"] != nil || a["userVerification"] != "required" {
			t.Fatalf("authenticate options signed out = %v", a)
		}
		d.Cred.Counter = 1
		res := harness.MustOK(t, c.Post("/api/auth/passkey/verify-authentication", harness.PkBody(t, d.Assert(t, auth))))
		if u := res["user"].(map[string]any); u["email"] != harness.Email(t, "ada@example.com") {
			t.Fatalf("verify-authentication user = %v", u)
		}
		if m := authMethods(t, c); !slices.Contains(m, "hwk") || !slices.Contains(m, "user") || !slices.Contains(m, "mfa") || slices.Contains(m, "pwd") {
			t.Fatalf("authMethods = %v, want hwk, user and mfa", m)
		}
		harness.MustStatus(t, c.Get("/api/auth/passkey/list-user-passkeys"), http.StatusOK)

		// Signed in with passkeys: allowCredentials names them.
		a := harness.MustOK(t, c.Get("/api/auth/passkey/generate-authenticate-options"))
		allow, _ := a["allowCredentials"].([]any)
		if len(allow) != 1 || allow[0].(map[string]any)["id"] != d.CredentialID() {
			t.Fatalf("allowCredentials signed in = %v", a["allowCredentials"])
		}
	})
}

func TestPasskey_refusals(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.PkEnv, func(t *testing.T, app *harness.App) {
		ada, adaKey := harness.MustPasskeyUser(t, app, harness.Email(t, "ada@example.com"))
		bob, bobKey := harness.MustPasskeyUser(t, app, harness.Email(t, "bob@example.com"))

		t.Run("counter_regression", func(t *testing.T) {
			c := app.NewClient(t)
			adaKey.Cred.Counter = 5
			harness.MustOK(t, harness.PasskeySignIn(t, c, adaKey))
			for _, n := range []uint32{3, 5} {
				adaKey.Cred.Counter = n
				harness.MustCode(t, harness.PasskeySignIn(t, app.NewClient(t), adaKey), http.StatusUnauthorized, "PASSKEY_COUNTER_REGRESSED")
			}
			adaKey.Cred.Counter = 6
			harness.MustOK(t, harness.PasskeySignIn(t, app.NewClient(t), adaKey))
		})

		t.Run("challenge_used_twice", func(t *testing.T) {
			c := app.NewClient(t)
			bobKey.Cred.Counter++
			as := bobKey.Assert(t, c.Get("/api/auth/passkey/generate-authenticate-options"))
			replay := c.Clone()
			harness.MustOK(t, c.Post("/api/auth/passkey/verify-authentication", harness.PkBody(t, as)))
			bobKey.Cred.Counter++
			harness.MustCode(t, replay.Post("/api/auth/passkey/verify-authentication", harness.PkBody(t, as)), http.StatusBadRequest, "CHALLENGE_NOT_FOUND")
			// No cookie at all, or a forged one.
			harness.MustCode(t, app.NewClient(t).Post("/api/auth/passkey/verify-authentication", harness.PkBody(t, as)), http.StatusBadRequest, "CHALLENGE_NOT_FOUND")
		})

		t.Run("another_users_credential", func(t *testing.T) {
			// Ada's key presented as Bob's (his user handle): refused.
			forged := *adaKey
			forged.Auth.Options.UserHandle = bobKey.Auth.Options.UserHandle
			forged.Cred.Counter = 100
			harness.MustCode(t, harness.PasskeySignIn(t, app.NewClient(t), &forged), http.StatusUnauthorized, "AUTHENTICATION_FAILED")
			// Signed in as Bob, stepping up with Ada's key: refused.
			harness.MustCode(t, harness.PasskeySignIn(t, bob, &forged), http.StatusUnauthorized, "AUTHENTICATION_FAILED")
			// A registration challenge issued to Ada, answered in Bob's session.
			att := harness.NewDevice().Attest(t, ada.Get("/api/auth/passkey/generate-register-options"))
			thief := bob.Clone()
			for name, v := range ada.Cookies {
				if strings.HasSuffix(name, ".better-auth-passkey") {
					thief.Cookies[name] = v
				}
			}
			harness.MustCode(t, thief.Post("/api/auth/passkey/verify-registration", harness.PkBody(t, att)), http.StatusUnauthorized, "YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY")
			// Renaming or deleting Ada's passkey as Bob.
			harness.MustCode(t, bob.Post("/api/auth/passkey/update-passkey", harness.MustJSON(t, map[string]any{"id": adaKey.CredentialID(), "name": "mine"})), http.StatusNotFound, "PASSKEY_NOT_FOUND")
			harness.MustCode(t, bob.Post("/api/auth/passkey/delete-passkey", harness.MustJSON(t, map[string]any{"id": adaKey.CredentialID()})), http.StatusNotFound, "PASSKEY_NOT_FOUND")
		})

		t.Run("wrong_origin", func(t *testing.T) {
			evil := *adaKey
			evil.Rp.Origin = "http://localhost.evil.example"
			evil.Cred.Counter = 200
			harness.MustCode(t, harness.PasskeySignIn(t, app.NewClient(t), &evil), http.StatusUnauthorized, "AUTHENTICATION_FAILED")
			d := harness.NewDevice()
			d.Rp.Origin = "http://evil.example"
			att := d.Attest(t, ada.Get("/api/auth/passkey/generate-register-options"))
			harness.MustCode(t, ada.Post("/api/auth/passkey/verify-registration", harness.PkBody(t, att)), http.StatusBadRequest, "FAILED_TO_VERIFY_REGISTRATION")
		})

		t.Run("user_verification_required", func(t *testing.T) {
			lazy := *adaKey
			lazy.Auth.Options.UserNotVerified = true
			lazy.Cred.Counter = 300
			harness.MustCode(t, harness.PasskeySignIn(t, app.NewClient(t), &lazy), http.StatusUnauthorized, "AUTHENTICATION_FAILED")
		})

		t.Run("unknown_credential", func(t *testing.T) {
			stranger := harness.NewDevice()
			stranger.Auth.Options.UserHandle = []byte("nobody")
			harness.MustCode(t, harness.PasskeySignIn(t, app.NewClient(t), stranger), http.StatusUnauthorized, "PASSKEY_NOT_FOUND")
		})
	})
}

func TestPasskey_delete_last_needs_step_up(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.PkEnv, func(t *testing.T, app *harness.App) {
		_, d := harness.MustPasskeyUser(t, app, harness.Email(t, "ada@example.com"))
		// A password session has proven no second factor: the last passkey
		// stays until one is proven in the session.
		c := app.NewClient(t)
		harness.MustSignIn(t, c, harness.Email(t, "ada@example.com"), harness.TfPassword)
		del := harness.MustJSON(t, map[string]any{"id": d.CredentialID()})
		harness.MustCode(t, c.Post("/api/auth/passkey/delete-passkey", del), http.StatusForbidden, "SECOND_FACTOR_REQUIRED")

		// A second passkey can go without a step-up, while one remains.
		second := harness.NewDevice()
		harness.MustRegister(t, c, second, "Phone")
		harness.MustOK(t, c.Post("/api/auth/passkey/delete-passkey", harness.MustJSON(t, map[string]any{"id": second.CredentialID()})))
		harness.MustCode(t, c.Post("/api/auth/passkey/delete-passkey", del), http.StatusForbidden, "SECOND_FACTOR_REQUIRED")

		// Stepping up with the passkey in this session (allowCredentials).
		d.Cred.Counter = 1
		harness.MustOK(t, harness.PasskeySignIn(t, c, d))
		if m := authMethods(t, c); !slices.Contains(m, "pwd") || !slices.Contains(m, "hwk") || !slices.Contains(m, "mfa") {
			t.Fatalf("authMethods after step-up = %v, want pwd, hwk and mfa", m)
		}
		harness.MustOK(t, c.Post("/api/auth/passkey/delete-passkey", del))
		var list []map[string]any
		harness.MustUnmarshal(t, c.Get("/api/auth/passkey/list-user-passkeys").Body, &list)
		if len(list) != 0 {
			t.Fatalf("list after delete = %v", list)
		}
		harness.MustCode(t, c.Post("/api/auth/passkey/delete-passkey", del), http.StatusNotFound, "PASSKEY_NOT_FOUND")
		d.Cred.Counter = 2
		harness.MustCode(t, harness.PasskeySignIn(t, app.NewClient(t), d), http.StatusUnauthorized, "PASSKEY_NOT_FOUND")
	})
}

func TestPasskey_hostile_input(t *testing.T) {
	t.Parallel()
	harness.ForStores(t, harness.StoresThatMatter, harness.PkEnv, func(t *testing.T, app *harness.App) {
		c, d := harness.MustPasskeyUser(t, app, harness.Email(t, "ada@example.com"))
		c.Get("/api/auth/passkey/generate-authenticate-options")
		for name, tc := range map[string]struct{ path, body, field string }{
			"response_string":     {"/api/auth/passkey/verify-authentication", `{"response":"x"}`, "body.response"},
			"response_missing":    {"/api/auth/passkey/verify-authentication", `{}`, "body.response"},
			"response_bad_base64": {"/api/auth/passkey/verify-authentication", `{"response":{"id":"!!","rawId":"!!","type":"public-key","response":{"clientDataJSON":"%%","authenticatorData":"%%","signature":"%%"}}}`, "body.response"},
			"response_empty":      {"/api/auth/passkey/verify-authentication", `{"response":{}}`, "body.response"},
			"registration_junk":   {"/api/auth/passkey/verify-registration", `{"response":{"id":"AA","rawId":"AA","type":"public-key","response":{"attestationObject":"AAAA","clientDataJSON":"e30"}}}`, "body.response"},
			"update_bad_id":       {"/api/auth/passkey/update-passkey", `{"id":"***","name":"x"}`, "body.id"},
			"update_blank_name":   {"/api/auth/passkey/update-passkey", `{"id":"` + d.CredentialID() + `","name":"   "}`, "body.name"},
			"delete_bad_id":       {"/api/auth/passkey/delete-passkey", `{"id":"%%%"}`, "body.id"},
		} {
			t.Run(name, func(t *testing.T) {
				msg := harness.MustCode(t, c.Post(tc.path, tc.body), http.StatusBadRequest, "VALIDATION_ERROR")
				if !strings.Contains(msg, tc.field) {
					t.Fatalf("message %q does not name %s", msg, tc.field)
				}
			})
		}
		r := c.Post("/api/auth/passkey/verify-authentication", `{"response":`)
		if r.Status != http.StatusBadRequest {
			t.Fatalf("truncated JSON = %d %s, want 400", r.Status, r.Body)
		}
		r = c.Get("/api/auth/passkey/generate-register-options?authenticatorAttachment=usb")
		if r.Status != http.StatusBadRequest && r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("unknown attachment = %d %s, want 400", r.Status, r.Body)
		}
	})
}

// A passkey sign-in of a user with two-factor on is complete: no two_factor
// challenge, a session at once, its second factor recorded.
func TestPasskey_sign_in_satisfies_two_factor(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.PkEnv, func(t *testing.T, app *harness.App) {
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "ada@example.com"))
		d := harness.NewDevice()
		harness.MustRegister(t, u.C, d, "Laptop")
		// The password alone asks for the second factor.
		if body := harness.MustOK(t, app.NewClient(t).Post("/api/auth/sign-in/email", harness.MustCredentials(t, u.Email, harness.TfPassword))); body["twoFactorRedirect"] != true {
			t.Fatalf("password sign-in of a two-factor user = %v, want twoFactorRedirect", body)
		}
		c := app.NewClient(t)
		d.Cred.Counter = 1
		r := harness.PasskeySignIn(t, c, d)
		harness.MustOK(t, r)
		for name := range harness.SetCookies(r) {
			if strings.HasSuffix(name, ".two_factor") {
				t.Fatalf("a passkey sign-in set %s", name)
			}
		}
		s, _ := harness.MustSession(t, c)["session"].(map[string]any)
		if s["secondFactorAt"] == nil {
			t.Fatalf("session = %v, want secondFactorAt", s)
		}
		if m := authMethods(t, c); !slices.Contains(m, "mfa") {
			t.Fatalf("authMethods = %v, want mfa", m)
		}
	})
}
