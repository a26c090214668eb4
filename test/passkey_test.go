package test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/descope/virtualwebauthn"
	"github.com/gatehouse/gatehouse/test/webauthntest"
)

// The passkey plugin's routes (docs/multi-factor.md, Passkeys), from
// outside, with a software authenticator: registration, the list, rename,
// sign-in with a discoverable passkey, step-up, deletion, and what is
// refused: a counter that went backwards, a challenge used twice, another
// user's credential, a wrong origin, no user verification, hostile input.

const pkOrigin = "http://localhost:3000"

// pkEnv makes localhost the relying party (the test server listens on an
// address, which browsers refuse as an RP ID); the ceremonies' client data
// names pkOrigin.
var pkEnv = fwEnv(fwQuick, map[string]string{
	"GATEHOUSE_PASSKEY_RP_ID":   "localhost",
	"GATEHOUSE_PASSKEY_ORIGINS": pkOrigin,
	"GATEHOUSE_STEP_UP_WINDOW":  "1m",
})

// pkDevice is an authenticator holding one passkey.
type pkDevice struct {
	rp   virtualwebauthn.RelyingParty
	auth virtualwebauthn.Authenticator
	cred virtualwebauthn.Credential
}

func newDevice() *pkDevice {
	return &pkDevice{
		rp:   virtualwebauthn.RelyingParty{ID: "localhost", Name: "Gatehouse", Origin: pkOrigin},
		auth: virtualwebauthn.NewAuthenticator(),
		cred: webauthntest.NewEC2Credential(),
	}
}

// credentialID is the device's passkey id as the wire gives it.
func (d *pkDevice) credentialID() string { return base64.RawURLEncoding.EncodeToString(d.cred.ID) }

// attest answers the registration options of r.
func (d *pkDevice) attest(t testing.TB, r *response) string {
	t.Helper()
	mustStatus(t, r, http.StatusOK)
	opts, err := virtualwebauthn.ParseAttestationOptions(string(r.Body))
	if err != nil {
		t.Fatalf("registration options %s: %v", r.Body, err)
	}
	// The parser decodes user.id, the user handle.
	d.auth.Options.UserHandle = []byte(opts.UserID)
	return virtualwebauthn.CreateAttestationResponse(d.rp, d.auth, d.cred, *opts)
}

// assert answers the authentication options of r.
func (d *pkDevice) assert(t testing.TB, r *response) string {
	t.Helper()
	mustStatus(t, r, http.StatusOK)
	opts, err := virtualwebauthn.ParseAssertionOptions(string(r.Body))
	if err != nil {
		t.Fatalf("authentication options %s: %v", r.Body, err)
	}
	return virtualwebauthn.CreateAssertionResponse(d.rp, d.auth, d.cred, *opts)
}

func pkBody(t testing.TB, response string, extra ...any) string {
	t.Helper()
	body := map[string]any{"response": json.RawMessage(response)}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	return mustJSON(t, body)
}

// mustRegister registers d's passkey as name for c's user and returns the
// stored row.
func mustRegister(t testing.TB, c *fwClient, d *pkDevice, name string) map[string]any {
	t.Helper()
	att := d.attest(t, c.get("/api/auth/passkey/generate-register-options"))
	return mustOK(t, c.post("/api/auth/passkey/verify-registration", pkBody(t, att, "name", name)))
}

// passkeySignIn runs an authentication ceremony with d through c.
func passkeySignIn(t testing.TB, c *fwClient, d *pkDevice) *response {
	t.Helper()
	as := d.assert(t, c.get("/api/auth/passkey/generate-authenticate-options"))
	return c.post("/api/auth/passkey/verify-authentication", pkBody(t, as))
}

// mustPasskeyUser signs email up and registers a passkey, returning the
// signed-in client and the device.
func mustPasskeyUser(t *testing.T, app *fwApp, email string) (*fwClient, *pkDevice) {
	t.Helper()
	c := app.client(t)
	mustSignUp(t, c, "Ada", email, tfPassword)
	d := newDevice()
	mustRegister(t, c, d, "Laptop")
	return c, d
}

func authMethods(t testing.TB, c *fwClient) []string {
	t.Helper()
	s, _ := mustSession(t, c)["session"].(map[string]any)
	var out []string
	for _, m := range s["authMethods"].([]any) {
		out = append(out, m.(string))
	}
	return out
}

func TestPasskey_register_sign_in_and_manage(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, pkEnv, func(t *testing.T, app *fwApp) {
		c := app.client(t)
		mustSignUp(t, c, "Ada", "ada@example.com", tfPassword)

		opts := c.get("/api/auth/passkey/generate-register-options")
		o := mustOK(t, opts)
		if rp := o["rp"].(map[string]any); rp["id"] != "localhost" || rp["name"] != "Gatehouse" {
			t.Fatalf("rp = %v", rp)
		}
		sel := o["authenticatorSelection"].(map[string]any)
		if sel["userVerification"] != "required" || sel["residentKey"] != "required" {
			t.Fatalf("authenticatorSelection = %v, want user verification and a discoverable key required", sel)
		}
		ck := setCookies(opts)["better-auth.better-auth-passkey"]
		if ck == nil {
			for name, v := range setCookies(opts) {
				if strings.HasSuffix(name, ".better-auth-passkey") {
					ck = v
				}
			}
		}
		if ck == nil || ck.MaxAge != 300 || !ck.HttpOnly {
			t.Fatalf("challenge cookie = %+v, want HttpOnly with Max-Age 300", ck)
		}

		d := newDevice()
		row := mustOK(t, c.post("/api/auth/passkey/verify-registration", pkBody(t, d.attest(t, opts), "name", "  Laptop ")))
		if row["name"] != "Laptop" || row["credentialID"] != d.credentialID() || row["id"] != d.credentialID() ||
			row["deviceType"] != "singleDevice" || row["backedUp"] != false || row["counter"] != float64(0) {
			t.Fatalf("registered passkey = %v", row)
		}
		if _, err := base64.StdEncoding.DecodeString(row["publicKey"].(string)); err != nil {
			t.Fatalf("publicKey %v is not standard base64: %v", row["publicKey"], err)
		}

		var list []map[string]any
		mustUnmarshal(t, c.get("/api/auth/passkey/list-user-passkeys").Body, &list)
		if len(list) != 1 || list[0]["id"] != d.credentialID() {
			t.Fatalf("list = %v", list)
		}
		renamed := mustOK(t, c.post("/api/auth/passkey/update-passkey", mustJSON(t, map[string]any{"id": d.credentialID(), "name": "Work laptop"})))
		if p := renamed["passkey"].(map[string]any); p["name"] != "Work laptop" {
			t.Fatalf("update-passkey = %v", renamed)
		}

		mustOK(t, c.post("/api/auth/sign-out", "{}"))
		mustNoSession(t, c)

		// Signed out: a discoverable ceremony, then a complete sign-in.
		auth := c.get("/api/auth/passkey/generate-authenticate-options")
		if a := mustOK(t, auth); a["rpId"] != "localhost" || a["allowCredentials"] != nil || a["userVerification"] != "required" {
			t.Fatalf("authenticate options signed out = %v", a)
		}
		d.cred.Counter = 1
		res := mustOK(t, c.post("/api/auth/passkey/verify-authentication", pkBody(t, d.assert(t, auth))))
		if u := res["user"].(map[string]any); u["email"] != "ada@example.com" {
			t.Fatalf("verify-authentication user = %v", u)
		}
		if m := authMethods(t, c); !slices.Contains(m, "hwk") || !slices.Contains(m, "user") || !slices.Contains(m, "mfa") || slices.Contains(m, "pwd") {
			t.Fatalf("authMethods = %v, want hwk, user and mfa", m)
		}
		mustStatus(t, c.get("/api/auth/passkey/list-user-passkeys"), http.StatusOK)

		// Signed in with passkeys: allowCredentials names them.
		a := mustOK(t, c.get("/api/auth/passkey/generate-authenticate-options"))
		allow, _ := a["allowCredentials"].([]any)
		if len(allow) != 1 || allow[0].(map[string]any)["id"] != d.credentialID() {
			t.Fatalf("allowCredentials signed in = %v", a["allowCredentials"])
		}
	})
}

func TestPasskey_refusals(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, pkEnv, func(t *testing.T, app *fwApp) {
		ada, adaKey := mustPasskeyUser(t, app, "ada@example.com")
		bob, bobKey := mustPasskeyUser(t, app, "bob@example.com")

		t.Run("counter_regression", func(t *testing.T) {
			c := app.client(t)
			adaKey.cred.Counter = 5
			mustOK(t, passkeySignIn(t, c, adaKey))
			for _, n := range []uint32{3, 5} {
				adaKey.cred.Counter = n
				mustCode(t, passkeySignIn(t, app.client(t), adaKey), http.StatusUnauthorized, "PASSKEY_COUNTER_REGRESSED")
			}
			adaKey.cred.Counter = 6
			mustOK(t, passkeySignIn(t, app.client(t), adaKey))
		})

		t.Run("challenge_used_twice", func(t *testing.T) {
			c := app.client(t)
			bobKey.cred.Counter++
			as := bobKey.assert(t, c.get("/api/auth/passkey/generate-authenticate-options"))
			replay := c.clone()
			mustOK(t, c.post("/api/auth/passkey/verify-authentication", pkBody(t, as)))
			bobKey.cred.Counter++
			mustCode(t, replay.post("/api/auth/passkey/verify-authentication", pkBody(t, as)), http.StatusBadRequest, "CHALLENGE_NOT_FOUND")
			// No cookie at all, or a forged one.
			mustCode(t, app.client(t).post("/api/auth/passkey/verify-authentication", pkBody(t, as)), http.StatusBadRequest, "CHALLENGE_NOT_FOUND")
		})

		t.Run("another_users_credential", func(t *testing.T) {
			// Ada's key presented as Bob's (his user handle): refused.
			forged := *adaKey
			forged.auth.Options.UserHandle = bobKey.auth.Options.UserHandle
			forged.cred.Counter = 100
			mustCode(t, passkeySignIn(t, app.client(t), &forged), http.StatusUnauthorized, "AUTHENTICATION_FAILED")
			// Signed in as Bob, stepping up with Ada's key: refused.
			mustCode(t, passkeySignIn(t, bob, &forged), http.StatusUnauthorized, "AUTHENTICATION_FAILED")
			// A registration challenge issued to Ada, answered in Bob's session.
			att := newDevice().attest(t, ada.get("/api/auth/passkey/generate-register-options"))
			thief := bob.clone()
			for name, v := range ada.Cookies {
				if strings.HasSuffix(name, ".better-auth-passkey") {
					thief.Cookies[name] = v
				}
			}
			mustCode(t, thief.post("/api/auth/passkey/verify-registration", pkBody(t, att)), http.StatusUnauthorized, "YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY")
			// Renaming or deleting Ada's passkey as Bob.
			mustCode(t, bob.post("/api/auth/passkey/update-passkey", mustJSON(t, map[string]any{"id": adaKey.credentialID(), "name": "mine"})), http.StatusNotFound, "PASSKEY_NOT_FOUND")
			mustCode(t, bob.post("/api/auth/passkey/delete-passkey", mustJSON(t, map[string]any{"id": adaKey.credentialID()})), http.StatusNotFound, "PASSKEY_NOT_FOUND")
		})

		t.Run("wrong_origin", func(t *testing.T) {
			evil := *adaKey
			evil.rp.Origin = "http://localhost.evil.example"
			evil.cred.Counter = 200
			mustCode(t, passkeySignIn(t, app.client(t), &evil), http.StatusUnauthorized, "AUTHENTICATION_FAILED")
			d := newDevice()
			d.rp.Origin = "http://evil.example"
			att := d.attest(t, ada.get("/api/auth/passkey/generate-register-options"))
			mustCode(t, ada.post("/api/auth/passkey/verify-registration", pkBody(t, att)), http.StatusBadRequest, "FAILED_TO_VERIFY_REGISTRATION")
		})

		t.Run("user_verification_required", func(t *testing.T) {
			lazy := *adaKey
			lazy.auth.Options.UserNotVerified = true
			lazy.cred.Counter = 300
			mustCode(t, passkeySignIn(t, app.client(t), &lazy), http.StatusUnauthorized, "AUTHENTICATION_FAILED")
		})

		t.Run("unknown_credential", func(t *testing.T) {
			stranger := newDevice()
			stranger.auth.Options.UserHandle = []byte("nobody")
			mustCode(t, passkeySignIn(t, app.client(t), stranger), http.StatusUnauthorized, "PASSKEY_NOT_FOUND")
		})
	})
}

func TestPasskey_delete_last_needs_step_up(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, pkEnv, func(t *testing.T, app *fwApp) {
		_, d := mustPasskeyUser(t, app, "ada@example.com")
		// A password session has proven no second factor: the last passkey
		// stays until one is proven in the session.
		c := app.client(t)
		mustSignIn(t, c, "ada@example.com", tfPassword)
		del := mustJSON(t, map[string]any{"id": d.credentialID()})
		mustCode(t, c.post("/api/auth/passkey/delete-passkey", del), http.StatusForbidden, "SECOND_FACTOR_REQUIRED")

		// A second passkey can go without a step-up, while one remains.
		second := newDevice()
		mustRegister(t, c, second, "Phone")
		mustOK(t, c.post("/api/auth/passkey/delete-passkey", mustJSON(t, map[string]any{"id": second.credentialID()})))
		mustCode(t, c.post("/api/auth/passkey/delete-passkey", del), http.StatusForbidden, "SECOND_FACTOR_REQUIRED")

		// Stepping up with the passkey in this session (allowCredentials).
		d.cred.Counter = 1
		mustOK(t, passkeySignIn(t, c, d))
		if m := authMethods(t, c); !slices.Contains(m, "pwd") || !slices.Contains(m, "hwk") || !slices.Contains(m, "mfa") {
			t.Fatalf("authMethods after step-up = %v, want pwd, hwk and mfa", m)
		}
		mustOK(t, c.post("/api/auth/passkey/delete-passkey", del))
		var list []map[string]any
		mustUnmarshal(t, c.get("/api/auth/passkey/list-user-passkeys").Body, &list)
		if len(list) != 0 {
			t.Fatalf("list after delete = %v", list)
		}
		mustCode(t, c.post("/api/auth/passkey/delete-passkey", del), http.StatusNotFound, "PASSKEY_NOT_FOUND")
		d.cred.Counter = 2
		mustCode(t, passkeySignIn(t, app.client(t), d), http.StatusUnauthorized, "PASSKEY_NOT_FOUND")
	})
}

func TestPasskey_hostile_input(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesThatMatter, pkEnv, func(t *testing.T, app *fwApp) {
		c, d := mustPasskeyUser(t, app, "ada@example.com")
		c.get("/api/auth/passkey/generate-authenticate-options")
		for name, tc := range map[string]struct{ path, body, field string }{
			"response_string":     {"/api/auth/passkey/verify-authentication", `{"response":"x"}`, "body.response"},
			"response_missing":    {"/api/auth/passkey/verify-authentication", `{}`, "body.response"},
			"response_bad_base64": {"/api/auth/passkey/verify-authentication", `{"response":{"id":"!!","rawId":"!!","type":"public-key","response":{"clientDataJSON":"%%","authenticatorData":"%%","signature":"%%"}}}`, "body.response"},
			"response_empty":      {"/api/auth/passkey/verify-authentication", `{"response":{}}`, "body.response"},
			"registration_junk":   {"/api/auth/passkey/verify-registration", `{"response":{"id":"AA","rawId":"AA","type":"public-key","response":{"attestationObject":"AAAA","clientDataJSON":"e30"}}}`, "body.response"},
			"update_bad_id":       {"/api/auth/passkey/update-passkey", `{"id":"***","name":"x"}`, "body.id"},
			"update_blank_name":   {"/api/auth/passkey/update-passkey", `{"id":"` + d.credentialID() + `","name":"   "}`, "body.name"},
			"delete_bad_id":       {"/api/auth/passkey/delete-passkey", `{"id":"%%%"}`, "body.id"},
		} {
			t.Run(name, func(t *testing.T) {
				msg := mustCode(t, c.post(tc.path, tc.body), http.StatusBadRequest, "VALIDATION_ERROR")
				if !strings.Contains(msg, tc.field) {
					t.Fatalf("message %q does not name %s", msg, tc.field)
				}
			})
		}
		r := c.post("/api/auth/passkey/verify-authentication", `{"response":`)
		if r.Status != http.StatusBadRequest {
			t.Fatalf("truncated JSON = %d %s, want 400", r.Status, r.Body)
		}
		r = c.get("/api/auth/passkey/generate-register-options?authenticatorAttachment=usb")
		if r.Status != http.StatusBadRequest && r.Status != http.StatusUnprocessableEntity {
			t.Fatalf("unknown attachment = %d %s, want 400", r.Status, r.Body)
		}
	})
}

// A passkey sign-in of a user with two-factor on is complete: no two_factor
// challenge, a session at once, its second factor recorded.
func TestPasskey_sign_in_satisfies_two_factor(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, pkEnv, func(t *testing.T, app *fwApp) {
		u := mustTwoFactorUser(t, app, "ada@example.com")
		d := newDevice()
		mustRegister(t, u.c, d, "Laptop")
		// The password alone asks for the second factor.
		if body := mustOK(t, app.client(t).post("/api/auth/sign-in/email", mustCredentials(t, u.email, tfPassword))); body["twoFactorRedirect"] != true {
			t.Fatalf("password sign-in of a two-factor user = %v, want twoFactorRedirect", body)
		}
		c := app.client(t)
		d.cred.Counter = 1
		r := passkeySignIn(t, c, d)
		mustOK(t, r)
		for name := range setCookies(r) {
			if strings.HasSuffix(name, ".two_factor") {
				t.Fatalf("a passkey sign-in set %s", name)
			}
		}
		s, _ := mustSession(t, c)["session"].(map[string]any)
		if s["secondFactorAt"] == nil {
			t.Fatalf("session = %v, want secondFactorAt", s)
		}
		if m := authMethods(t, c); !slices.Contains(m, "mfa") {
			t.Fatalf("authMethods = %v, want mfa", m)
		}
	})
}
