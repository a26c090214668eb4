package test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/domain"
)

// The operators' side of multi-factor (issue 16, item 5): the trusted user
// object says whether two-factor and passkeys are set up, a trusted route
// and an admin route reset a user's factors, and every enrolment, removal
// and reset is audited.

const factorsMailSubject = "second factors were reset"

// sessionUserID returns the id of c's signed-in user.
func sessionUserID(t testing.TB, c *fwClient) string {
	t.Helper()
	id, _ := mustUser(t, mustSession(t, c))["id"].(string)
	if id == "" {
		t.Fatal("no user id in get-session")
	}
	return id
}

// mustStorePasskey stores a passkey for user straight in the database, as a
// registration would (SQL stores only; nil for the memory store). It
// returns whether one was stored.
func mustStorePasskey(t testing.TB, app *fwApp, user string) bool {
	t.Helper()
	if app.DatabaseURL == "" {
		return false
	}
	repo := gormstore.NewPasskeyRepository(mustDB(t, app))
	err := repo.Create(t.Context(), domain.PasskeyCredential{ID: []byte("credential-of-" + user), UserID: domain.UserID(user),
		PublicKey: []byte{0xa5, 0x01, 0x02}, Transports: []string{"internal"}, CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// mustFactorsOf returns the trusted user object's twoFactorEnabled and
// passkeys, from get and from the listing (which must agree).
func mustFactorsOf(t testing.TB, k keyClient, id, email string) (bool, float64) {
	t.Helper()
	u := mustOK(t, k.do(http.MethodGet, usersPath+"/"+id, nil))
	mustBackendUser(t, u)
	page, _ := mustUserPage(t, k, url.Values{"email": {email}})
	if len(page) != 1 || page[0]["twoFactorEnabled"] != u["twoFactorEnabled"] || page[0]["passkeys"] != u["passkeys"] {
		t.Fatalf("listing %v disagrees with get %v", page, u)
	}
	on, ok1 := u["twoFactorEnabled"].(bool)
	n, ok2 := u["passkeys"].(float64)
	if !ok1 || !ok2 {
		t.Fatalf("user object without twoFactorEnabled or passkeys: %v", u)
	}
	return on, n
}

// mustFactorsGone checks that u's factors no longer work: their sessions
// are over, sign-in asks for no second factor, and an old backup code is
// refused.
func mustFactorsGone(t *testing.T, app *fwApp, u *tfUser) {
	t.Helper()
	mustNoSession(t, u.c)
	c := app.client(t)
	mustSignIn(t, c, u.email, tfPassword) // a session at once: no twoFactorRedirect
	if on := mustUser(t, mustSession(t, c))["twoFactorEnabled"]; on != false {
		t.Fatalf("twoFactorEnabled after the reset = %v", on)
	}
	mustCode(t, c.post("/api/auth/two-factor/verify-backup-code", mustJSON(t, map[string]any{"code": u.backups[1]})),
		http.StatusBadRequest, "TWO_FACTOR_NOT_ENABLED")
	mustCode(t, verifyTOTP(t, c, totpAt(u.secret, 0)), http.StatusBadRequest, "TOTP_NOT_ENABLED")
}

// auditActions returns the actions (oldest first) of the audit entries of
// actorID on target, as "action outcome[ code]".
func auditActions(t testing.TB, admin *fwClient, actorType, actorID, target string) []string {
	t.Helper()
	var out []string
	for _, e := range auditAll(t, admin, url.Values{"actorId": {actorID}}) {
		if e["targetId"] != target {
			continue
		}
		if e["actorType"] != actorType || e["targetType"] != "user" || e["requestId"] == "" {
			t.Fatalf("entry = %v", e)
		}
		s := fmt.Sprint(e["action"], " ", e["outcome"])
		if c, _ := e["code"].(string); c != "" {
			s += " " + c
		}
		out = append(out, s)
	}
	slices.Reverse(out)
	return out
}

func TestFactorsReset_trusted_api(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, adminEnv, func(t *testing.T, app *fwApp) {
		k, admin, keyID := mustUsersKey(t, app)
		u := mustTwoFactorUser(t, app, "ada@example.com")
		id := sessionUserID(t, u.c)
		var wantPasskeys float64
		if mustStorePasskey(t, app, id) {
			wantPasskeys = 1
		}
		if on, n := mustFactorsOf(t, k, id, u.email); !on || n != wantPasskeys {
			t.Fatalf("before the reset: twoFactorEnabled %v, passkeys %v; want true, %v", on, n, wantPasskeys)
		}
		// A plain user: no factors.
		plain := mustCreateBackendUser(t, k, map[string]any{"email": "bo@example.com", "name": "Bo"})
		if on, n := mustFactorsOf(t, k, mustID(t, plain), "bo@example.com"); on || n != 0 {
			t.Fatalf("plain user: twoFactorEnabled %v, passkeys %v", on, n)
		}

		// A key that may only read cannot reset.
		readKey := mustCreateKey(t, admin, map[string]any{"name": "reader", "scopes": []string{"users:read"}})
		reader := keyClient{t: t, c: app.client(t), headers: []string{"Authorization", "Bearer " + readKey["secret"].(string)}}
		mustProblem(t, reader.do(http.MethodPost, usersPath+"/"+id+"/factors/reset", nil), http.StatusForbidden, "auth.insufficient_scope")

		mustStatus(t, k.do(http.MethodPost, usersPath+"/"+id+"/factors/reset", nil), http.StatusNoContent)
		mustFactorsGone(t, app, u)
		if on, n := mustFactorsOf(t, k, id, u.email); on || n != 0 {
			t.Fatalf("after the reset: twoFactorEnabled %v, passkeys %v", on, n)
		}
		m := app.Mail.WaitFor(t, u.email, factorsMailSubject, mailWait)
		if !bytes.Contains([]byte(m.Text), []byte("signed out everywhere")) || len(m.Links()) != 0 {
			t.Fatalf("factors-reset mail: %s", m.Text)
		}

		// Again: idempotent, audited, and not mailed (a user without
		// factors has nothing reset to hear about). The next reset with
		// factors mails again, so two mails in all prove the second sent
		// none.
		mustStatus(t, k.do(http.MethodPost, usersPath+"/"+id+"/factors/reset", nil), http.StatusNoContent)
		u = mustTwoFactorUserAgain(t, app, u)
		mustStatus(t, k.do(http.MethodPost, usersPath+"/"+id+"/factors/reset", nil), http.StatusNoContent)
		mustNthMail(t, app, u.email, factorsMailSubject, 2)
		if got := mailsTo(app, u.email, factorsMailSubject); len(got) != 2 {
			t.Fatalf("factors-reset mails = %d, want 2 (none for the reset of a user without factors)", len(got))
		}

		mustProblem(t, k.do(http.MethodPost, usersPath+"/no-such-user/factors/reset", nil), http.StatusNotFound, "user.not_found")

		got := auditActions(t, admin, "service_key", keyID, id)
		want := []string{"users.reset-factors success", "users.reset-factors success", "users.reset-factors success"}
		if !slices.Equal(got, want) {
			t.Fatalf("audit of the key on the user = %v, want %v", got, want)
		}
		if got := auditActions(t, admin, "service_key", keyID, "no-such-user"); !slices.Equal(got, []string{"users.reset-factors failure user.not_found"}) {
			t.Fatalf("audit of the unknown user = %v", got)
		}
	})
}

// mustTwoFactorUserAgain signs u in (two-factor off after a reset) and
// enrols a new TOTP factor.
func mustTwoFactorUserAgain(t *testing.T, app *fwApp, u *tfUser) *tfUser {
	t.Helper()
	c := app.client(t)
	mustSignIn(t, c, u.email, tfPassword)
	en := mustOK(t, c.post("/api/auth/two-factor/enable", mustJSON(t, map[string]any{"password": tfPassword})))
	next := &tfUser{email: u.email, secret: totpSecretOf(t, en["totpURI"].(string)), c: c}
	for _, code := range en["backupCodes"].([]any) {
		next.backups = append(next.backups, code.(string))
	}
	mustOK(t, verifyTOTP(t, c, totpAt(next.secret, -1)))
	if on := mustUser(t, mustSession(t, c))["twoFactorEnabled"]; on != true {
		t.Fatalf("twoFactorEnabled after enrolling again = %v", on)
	}
	return next
}

// mustNthMail waits until at least n mails to to with subject arrived.
func mustNthMail(t testing.TB, app *fwApp, to, subject string, n int) {
	t.Helper()
	deadline := time.Now().Add(mailWait)
	for len(mailsTo(app, to, subject)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d mails %q to %s, want %d", len(mailsTo(app, to, subject)), subject, to, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestFactorsReset_admin_api(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, adminEnv, func(t *testing.T, app *fwApp) {
		admin, _ := mustAdmin(t, app)
		adminID := sessionUserID(t, admin)
		u := mustTwoFactorUser(t, app, "ada@example.com")
		id := sessionUserID(t, u.c)
		mustStorePasskey(t, app, id)
		path := "/api/admin/users/" + id + "/factors/reset"

		mustProblem(t, app.client(t).post(path, ""), http.StatusUnauthorized, "auth.unauthenticated")
		other := app.client(t)
		mustSignUp(t, other, "Eve", "eve@example.com", tfPassword)
		mustProblem(t, other.post(path, ""), http.StatusForbidden, "request.you_are_not_allowed_to_update_users")
		mustSession(t, u.c) // the refusals changed nothing

		mustStatus(t, admin.post(path, ""), http.StatusNoContent)
		mustFactorsGone(t, app, u)
		app.Mail.WaitFor(t, u.email, factorsMailSubject, mailWait)
		mustProblem(t, admin.post("/api/admin/users/no-such-user/factors/reset", ""), http.StatusNotFound, "request.user_not_found")

		if got := auditActions(t, admin, "user", adminID, id); !slices.Equal(got, []string{"admin.reset-user-factors success"}) {
			t.Fatalf("audit of the administrator on the user = %v", got)
		}
		eveID := sessionUserID(t, other)
		if got := auditActions(t, admin, "user", eveID, id); !slices.Equal(got,
			[]string{"admin.reset-user-factors denied YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS"}) {
			t.Fatalf("audit of the refused user = %v", got)
		}
	})
}

// TestTwoFactor_audit: a user's own enrolment (the first accepted code),
// new backup codes and disabling are audited with the user as the actor,
// refusals included.
func TestTwoFactor_audit(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, adminEnv, func(t *testing.T, app *fwApp) {
		admin, _ := mustAdmin(t, app)
		u := mustTwoFactorUser(t, app, "ada@example.com")
		id := sessionUserID(t, u.c)
		mustOK(t, u.c.post("/api/auth/two-factor/generate-backup-codes", mustJSON(t, map[string]any{"password": tfPassword})))
		mustCode(t, u.c.post("/api/auth/two-factor/disable", mustJSON(t, map[string]any{"password": "not the password"})),
			http.StatusBadRequest, "INVALID_PASSWORD")
		mustOK(t, u.c.post("/api/auth/two-factor/disable", mustJSON(t, map[string]any{"password": tfPassword})))
		mustCode(t, u.c.post("/api/auth/two-factor/generate-backup-codes", mustJSON(t, map[string]any{"password": tfPassword})),
			http.StatusBadRequest, "TWO_FACTOR_NOT_ENABLED")

		got := auditActions(t, admin, "user", id, id)
		// The log speaks the vocabulary of the contract the actor called.
		want := []string{"two-factor.enable success", "two-factor.backup-codes success", "two-factor.disable failure INVALID_PASSWORD",
			"two-factor.disable success", "two-factor.backup-codes failure TWO_FACTOR_NOT_ENABLED"}
		if !slices.Equal(got, want) {
			t.Fatalf("audit of the user = %v, want %v", got, want)
		}
	})
}

// TestTwoFactor_session_rotation: the code that turns two-factor on
// replaces the session (Better Auth 1.7.25): the old token is dead, the new
// cookie works and holds the step-up.
func TestTwoFactor_session_rotation(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		c := app.client(t)
		mustSignUp(t, c, "Ada", "ada@example.com", tfPassword)
		en := mustOK(t, c.post("/api/auth/two-factor/enable", mustJSON(t, map[string]any{"password": tfPassword})))
		secret := totpSecretOf(t, en["totpURI"].(string))
		old := c.clone()
		body := mustOK(t, verifyTOTP(t, c, totpAt(secret, 0)))
		if body["token"] == nil || c.Cookies["gatehouse.session_token"] == old.Cookies["gatehouse.session_token"] {
			t.Fatalf("verify-totp = %v; the session cookie was not replaced", body)
		}
		mustNoSession(t, old)
		_, at, _, _ := sessionFactors(t, c)
		if at == nil {
			t.Fatal("the rotated session has no secondFactorAt")
		}
		// A bearer client gets the new token in the body.
		mustOK(t, app.client(t).get("/api/auth/get-session", "Authorization", "Bearer "+body["token"].(string)))

		// Later codes in the session step it up in place.
		kept := c.clone()
		mustOK(t, verifyTOTP(t, c, totpAt(secret, 1)))
		mustSession(t, kept)
	})
}

// TestTwoFactor_email_code_in_session: send-otp and verify-otp in a
// session. For a user with two-factor off, the code turns it on (the
// e-mailed code is their second factor) and rotates the session, as Better
// Auth 1.7.25 does; for a user with it on, the code steps the session up.
func TestTwoFactor_email_code_in_session(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		c := app.client(t)
		mustSignUp(t, c, "Ada", "ada@example.com", tfPassword)
		verify := func(code string) *response {
			return c.post("/api/auth/two-factor/verify-otp", mustJSON(t, map[string]any{"code": code}))
		}
		mustCode(t, verify("123456"), http.StatusBadRequest, "OTP_HAS_EXPIRED") // none sent
		code := mustSendSessionOTP(t, app, c, 1)
		mustCode(t, verify(wrongCode(code)), http.StatusUnauthorized, "INVALID_CODE")
		old := c.clone()
		mustOK(t, verify(code))
		mustNoSession(t, old)
		s := mustSession(t, c)
		if mustUser(t, s)["twoFactorEnabled"] != true || s["session"].(map[string]any)["secondFactorAt"] == nil {
			t.Fatalf("after verify-otp in a session: %v", s)
		}
		mustCode(t, verify(code), http.StatusBadRequest, "OTP_HAS_EXPIRED") // used up

		// Sign-in now asks for a second factor.
		c2 := app.client(t)
		if body := mustOK(t, c2.post("/api/auth/sign-in/email", mustCredentials(t, "ada@example.com", tfPassword))); body["twoFactorRedirect"] != true {
			t.Fatalf("sign-in after the e-mailed code turned two-factor on = %v", body)
		}

		// With two-factor on, a session's code steps it up in place, later.
		before := s["session"].(map[string]any)["secondFactorAt"]
		time.Sleep(5 * time.Millisecond)
		code = mustSendSessionOTP(t, app, c, 2)
		kept := c.clone()
		mustOK(t, verify(code))
		mustSession(t, kept)
		if after := mustSession(t, c)["session"].(map[string]any)["secondFactorAt"]; after == nil || after == before {
			t.Fatalf("secondFactorAt %v → %v: not stepped up", before, after)
		}

		// Five wrong answers use the code up.
		code = mustSendSessionOTP(t, app, c, 3)
		for range 4 {
			mustCode(t, verify(wrongCode(code)), http.StatusUnauthorized, "INVALID_CODE")
		}
		mustCode(t, verify(wrongCode(code)), http.StatusBadRequest, "TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE")
		mustCode(t, verify(code), http.StatusBadRequest, "OTP_HAS_EXPIRED")
	})
}

// wrongCode returns a six-digit code other than code.
func wrongCode(code string) string {
	if code == "000000" {
		return "111111"
	}
	return "000000"
}

// mustSendSessionOTP asks for an e-mailed code in c's session and returns
// the n-th code mailed to c's user.
func mustSendSessionOTP(t *testing.T, app *fwApp, c *fwClient, n int) string {
	t.Helper()
	email := mustUser(t, mustSession(t, c))["email"].(string)
	mustOK(t, c.post("/api/auth/two-factor/send-otp", "{}"))
	mustNthMail(t, app, email, "sign-in code", n)
	var texts []string
	for _, m := range app.Mail.Messages() {
		if m.IsTo(email) && bytes.Contains([]byte(m.Subject), []byte("sign-in code")) {
			texts = append(texts, m.Text)
		}
	}
	found := otpPattern.FindStringSubmatch(texts[n-1])
	if found == nil {
		t.Fatalf("no code in mail: %s", texts[n-1])
	}
	return found[1]
}

// TestTwoFactor_enable_otp: enable {method: "otp"} (Better Auth 1.7.25)
// turns two-factor on at once with e-mailed codes, proven by the password,
// and rotates the session; sign-in then asks for the e-mailed code.
func TestTwoFactor_enable_otp(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		c := app.client(t)
		mustSignUp(t, c, "Ada", "ada@example.com", tfPassword)
		enable := func(password string) *response {
			return c.post("/api/auth/two-factor/enable", mustJSON(t, map[string]any{"password": password, "method": "otp"}))
		}
		mustCode(t, enable("not the password"), http.StatusBadRequest, "INVALID_PASSWORD")
		old := c.clone()
		body := mustOK(t, enable(tfPassword))
		if len(body) != 1 || body["method"] != "otp" {
			t.Fatalf("enable otp = %v, want exactly {method: otp}", body)
		}
		mustNoSession(t, old)
		if on := mustUser(t, mustSession(t, c))["twoFactorEnabled"]; on != true {
			t.Fatalf("twoFactorEnabled after enable otp = %v", on)
		}
		ch := app.client(t)
		if r := mustOK(t, ch.post("/api/auth/sign-in/email", mustCredentials(t, "ada@example.com", tfPassword))); r["twoFactorRedirect"] != true {
			t.Fatalf("sign-in = %v, want twoFactorRedirect", r)
		}
		mustOK(t, ch.post("/api/auth/two-factor/send-otp", "{}"))
		m := app.Mail.WaitFor(t, "ada@example.com", "sign-in code", mailWait)
		found := otpPattern.FindStringSubmatch(m.Text)
		if found == nil {
			t.Fatalf("no code in %s", m.Text)
		}
		mustOK(t, ch.post("/api/auth/two-factor/verify-otp", mustJSON(t, map[string]any{"code": found[1]})))
		mustSession(t, ch)
	})
}
