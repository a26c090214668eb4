package mfa

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
	"github.com/gatehouse/gatehouse/test/harness"
)

// The operators' side of multi-factor (issue 16, item 5): the trusted user
// object says whether two-factor and passkeys are set up, a trusted route
// and an admin route reset a user's factors, and every enrolment, removal
// and reset is audited.

const factorsMailSubject = "second factors were reset"

// sessionUserID returns the id of c's signed-in user.
func sessionUserID(t testing.TB, c *harness.Client) string {
	t.Helper()
	id, _ := harness.MustUser(t, harness.MustSession(t, c))["id"].(string)
	if id == "" {
		t.Fatal("no user id in get-session")
	}
	return id
}

// mustStorePasskey stores a passkey for user straight in the database, as a
// registration would (SQL stores only; nil for the memory store). It
// returns whether one was stored.
func mustStorePasskey(t testing.TB, app *harness.App, user string) bool {
	t.Helper()
	if app.DatabaseURL == "" {
		return false
	}
	repo := gormstore.NewPasskeyRepository(harness.MustDB(t, app))
	err := repo.Create(t.Context(), domain.PasskeyCredential{ID: []byte("credential-of-" + user), UserID: domain.UserID(user),
		PublicKey: []byte{0xa5, 0x01, 0x02}, Transports: []string{"internal"}, CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return true
}

// mustFactorsOf returns the trusted user object's twoFactorEnabled and
// passkeys, from get and from the listing (which must agree).
func mustFactorsOf(t testing.TB, k harness.KeyClient, id, email string) (bool, float64) {
	t.Helper()
	u := harness.MustOK(t, k.Do(http.MethodGet, harness.UsersPath+"/"+id, nil))
	harness.MustBackendUser(t, u)
	page, _ := harness.MustUserPage(t, k, url.Values{"email": {email}})
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
func mustFactorsGone(t *testing.T, app *harness.App, u *harness.TfUser) {
	t.Helper()
	harness.MustNoSession(t, u.C)
	c := app.NewClient(t)
	harness.MustSignIn(t, c, u.Email, harness.TfPassword) // a session at once: no twoFactorRedirect
	if on := harness.MustUser(t, harness.MustSession(t, c))["twoFactorEnabled"]; on != false {
		t.Fatalf("twoFactorEnabled after the reset = %v", on)
	}
	harness.MustCode(t, c.Post("/api/auth/two-factor/verify-backup-code", harness.MustJSON(t, map[string]any{"code": u.Backups[1]})),
		http.StatusBadRequest, "TWO_FACTOR_NOT_ENABLED")
	harness.MustCode(t, harness.VerifyTOTP(t, c, harness.TOTPAt(app.Clock, u.Secret, 0)), http.StatusBadRequest, "TOTP_NOT_ENABLED")
}

// auditActions returns the actions (oldest first) of the audit entries of
// actorID on target, as "action outcome[ code]".
func auditActions(t testing.TB, admin *harness.Client, actorType, actorID, target string) []string {
	t.Helper()
	var out []string
	for _, e := range harness.AuditAll(t, admin, url.Values{"actorId": {actorID}}) {
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
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		k, admin, keyID := harness.MustUsersKey(t, app)
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "ada@example.com"))
		id := sessionUserID(t, u.C)
		var wantPasskeys float64
		if mustStorePasskey(t, app, id) {
			wantPasskeys = 1
		}
		if on, n := mustFactorsOf(t, k, id, u.Email); !on || n != wantPasskeys {
			t.Fatalf("before the reset: twoFactorEnabled %v, passkeys %v; want true, %v", on, n, wantPasskeys)
		}
		// A plain user: no factors.
		plain := harness.MustCreateBackendUser(t, k, map[string]any{"email": harness.Email(t, "bo@example.com"), "name": "Bo"})
		if on, n := mustFactorsOf(t, k, harness.MustID(t, plain), harness.Email(t, "bo@example.com")); on || n != 0 {
			t.Fatalf("plain user: twoFactorEnabled %v, passkeys %v", on, n)
		}

		// A key that may only read cannot reset.
		readKey := harness.MustCreateKey(t, admin, map[string]any{"name": "reader", "scopes": []string{"users:read"}})
		reader := harness.KeyClient{T: t, C: app.NewClient(t), Headers: []string{"Authorization", "Bearer " + readKey["secret"].(string)}}
		harness.MustProblem(t, reader.Do(http.MethodPost, harness.UsersPath+"/"+id+"/factors/reset", nil), http.StatusForbidden, "auth.insufficient_scope")

		harness.MustStatus(t, k.Do(http.MethodPost, harness.UsersPath+"/"+id+"/factors/reset", nil), http.StatusNoContent)
		mustFactorsGone(t, app, u)
		if on, n := mustFactorsOf(t, k, id, u.Email); on || n != 0 {
			t.Fatalf("after the reset: twoFactorEnabled %v, passkeys %v", on, n)
		}
		m := app.Mail.WaitFor(t, u.Email, factorsMailSubject, harness.MailWait)
		if !bytes.Contains([]byte(m.Text), []byte("signed out everywhere")) || len(m.Links()) != 0 {
			t.Fatalf("factors-reset mail: %s", m.Text)
		}

		// Again: idempotent, audited, and not mailed (a user without
		// factors has nothing reset to hear about). The next reset with
		// factors mails again, so two mails in all prove the second sent
		// none.
		harness.MustStatus(t, k.Do(http.MethodPost, harness.UsersPath+"/"+id+"/factors/reset", nil), http.StatusNoContent)
		u = mustTwoFactorUserAgain(t, app, u)
		harness.MustStatus(t, k.Do(http.MethodPost, harness.UsersPath+"/"+id+"/factors/reset", nil), http.StatusNoContent)
		mustNthMail(t, app, u.Email, factorsMailSubject, 2)
		if got := harness.MailsTo(app, u.Email, factorsMailSubject); len(got) != 2 {
			t.Fatalf("factors-reset mails = %d, want 2 (none for the reset of a user without factors)", len(got))
		}

		harness.MustProblem(t, k.Do(http.MethodPost, harness.UsersPath+"/no-such-user/factors/reset", nil), http.StatusNotFound, "user.not_found")

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
func mustTwoFactorUserAgain(t *testing.T, app *harness.App, u *harness.TfUser) *harness.TfUser {
	t.Helper()
	c := app.NewClient(t)
	harness.MustSignIn(t, c, u.Email, harness.TfPassword)
	en := harness.MustOK(t, c.Post("/api/auth/two-factor/enable", harness.MustJSON(t, map[string]any{"password": harness.TfPassword})))
	next := &harness.TfUser{Email: u.Email, Secret: harness.TOTPSecretOf(t, en["totpURI"].(string)), C: c}
	for _, code := range en["backupCodes"].([]any) {
		next.Backups = append(next.Backups, code.(string))
	}
	harness.MustOK(t, harness.VerifyTOTP(t, c, harness.TOTPAt(app.Clock, next.Secret, -1)))
	if on := harness.MustUser(t, harness.MustSession(t, c))["twoFactorEnabled"]; on != true {
		t.Fatalf("twoFactorEnabled after enrolling again = %v", on)
	}
	return next
}

// mustNthMail waits until at least n mails to to with subject arrived.
func mustNthMail(t testing.TB, app *harness.App, to, subject string, n int) {
	t.Helper()
	deadline := time.Now().Add(harness.MailWait)
	for len(harness.MailsTo(app, to, subject)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d mails %q to %s, want %d", len(harness.MailsTo(app, to, subject)), subject, to, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestFactorsReset_admin_api(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		adminID := sessionUserID(t, admin)
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "ada@example.com"))
		id := sessionUserID(t, u.C)
		mustStorePasskey(t, app, id)
		path := "/api/admin/users/" + id + "/factors/reset"

		harness.MustProblem(t, app.NewClient(t).Post(path, ""), http.StatusUnauthorized, "auth.unauthenticated")
		other := app.NewClient(t)
		harness.MustSignUp(t, other, "Eve", harness.Email(t, "eve@example.com"), harness.TfPassword)
		harness.MustProblem(t, other.Post(path, ""), http.StatusForbidden, "request.you_are_not_allowed_to_update_users")
		harness.MustSession(t, u.C) // the refusals changed nothing

		harness.MustStatus(t, admin.Post(path, ""), http.StatusNoContent)
		mustFactorsGone(t, app, u)
		app.Mail.WaitFor(t, u.Email, factorsMailSubject, harness.MailWait)
		harness.MustProblem(t, admin.Post("/api/admin/users/no-such-user/factors/reset", ""), http.StatusNotFound, "request.user_not_found")

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
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "ada@example.com"))
		id := sessionUserID(t, u.C)
		harness.MustOK(t, u.C.Post("/api/auth/two-factor/generate-backup-codes", harness.MustJSON(t, map[string]any{"password": harness.TfPassword})))
		harness.MustCode(t, u.C.Post("/api/auth/two-factor/disable", harness.MustJSON(t, map[string]any{"password": "not the password"})),
			http.StatusBadRequest, "INVALID_PASSWORD")
		harness.MustOK(t, u.C.Post("/api/auth/two-factor/disable", harness.MustJSON(t, map[string]any{"password": harness.TfPassword})))
		harness.MustCode(t, u.C.Post("/api/auth/two-factor/generate-backup-codes", harness.MustJSON(t, map[string]any{"password": harness.TfPassword})),
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
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		c := app.NewClient(t)
		harness.MustSignUp(t, c, "Ada", harness.Email(t, "ada@example.com"), harness.TfPassword)
		en := harness.MustOK(t, c.Post("/api/auth/two-factor/enable", harness.MustJSON(t, map[string]any{"password": harness.TfPassword})))
		secret := harness.TOTPSecretOf(t, en["totpURI"].(string))
		old := c.Clone()
		body := harness.MustOK(t, harness.VerifyTOTP(t, c, harness.TOTPAt(app.Clock, secret, 0)))
		if body["token"] == nil || c.Cookies["gatehouse.session_token"] == old.Cookies["gatehouse.session_token"] {
			t.Fatalf("verify-totp = %v; the session cookie was not replaced", body)
		}
		harness.MustNoSession(t, old)
		_, at, _, _ := harness.SessionFactors(t, c)
		if at == nil {
			t.Fatal("the rotated session has no secondFactorAt")
		}
		// A bearer client gets the new token in the body.
		harness.MustOK(t, app.NewClient(t).Get("/api/auth/get-session", "Authorization", "Bearer "+body["token"].(string)))

		// Later codes in the session step it up in place.
		kept := c.Clone()
		harness.MustOK(t, harness.VerifyTOTP(t, c, harness.TOTPAt(app.Clock, secret, 1)))
		harness.MustSession(t, kept)
	})
}

// TestTwoFactor_email_code_in_session: send-otp and verify-otp in a
// session. For a user with two-factor off, the code turns it on (the
// e-mailed code is their second factor) and rotates the session, as Better
// Auth 1.7.25 does; for a user with it on, the code steps the session up.
func TestTwoFactor_email_code_in_session(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		c := app.NewClient(t)
		harness.MustSignUp(t, c, "Ada", harness.Email(t, "ada@example.com"), harness.TfPassword)
		verify := func(code string) *harness.Response {
			return c.Post("/api/auth/two-factor/verify-otp", harness.MustJSON(t, map[string]any{"code": code}))
		}
		harness.MustCode(t, verify("123456"), http.StatusBadRequest, "OTP_HAS_EXPIRED") // none sent
		code := mustSendSessionOTP(t, app, c, 1)
		harness.MustCode(t, verify(wrongCode(code)), http.StatusUnauthorized, "INVALID_CODE")
		old := c.Clone()
		harness.MustOK(t, verify(code))
		harness.MustNoSession(t, old)
		s := harness.MustSession(t, c)
		if harness.MustUser(t, s)["twoFactorEnabled"] != true || s["session"].(map[string]any)["secondFactorAt"] == nil {
			t.Fatalf("after verify-otp in a session: %v", s)
		}
		harness.MustCode(t, verify(code), http.StatusBadRequest, "OTP_HAS_EXPIRED") // used up

		// Sign-in now asks for a second factor.
		c2 := app.NewClient(t)
		if body := harness.MustOK(t, c2.Post("/api/auth/sign-in/email", harness.MustCredentials(t, harness.Email(t, "ada@example.com"), harness.TfPassword))); body["twoFactorRedirect"] != true {
			t.Fatalf("sign-in after the e-mailed code turned two-factor on = %v", body)
		}

		// With two-factor on, a session's code steps it up in place, later.
		before := s["session"].(map[string]any)["secondFactorAt"]
		time.Sleep(5 * time.Millisecond)
		code = mustSendSessionOTP(t, app, c, 2)
		kept := c.Clone()
		harness.MustOK(t, verify(code))
		harness.MustSession(t, kept)
		if after := harness.MustSession(t, c)["session"].(map[string]any)["secondFactorAt"]; after == nil || after == before {
			t.Fatalf("secondFactorAt %v → %v: not stepped up", before, after)
		}

		// Five wrong answers use the code up.
		code = mustSendSessionOTP(t, app, c, 3)
		for range 4 {
			harness.MustCode(t, verify(wrongCode(code)), http.StatusUnauthorized, "INVALID_CODE")
		}
		harness.MustCode(t, verify(wrongCode(code)), http.StatusBadRequest, "TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE")
		harness.MustCode(t, verify(code), http.StatusBadRequest, "OTP_HAS_EXPIRED")
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
func mustSendSessionOTP(t *testing.T, app *harness.App, c *harness.Client, n int) string {
	t.Helper()
	email := harness.MustUser(t, harness.MustSession(t, c))["email"].(string)
	harness.MustOK(t, c.Post("/api/auth/two-factor/send-otp", "{}"))
	mustNthMail(t, app, email, "sign-in code", n)
	var texts []string
	for _, m := range app.Mail.Messages() {
		if m.IsTo(email) && bytes.Contains([]byte(m.Subject), []byte("sign-in code")) {
			texts = append(texts, m.Text)
		}
	}
	found := harness.OTPPattern.FindStringSubmatch(texts[n-1])
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
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		c := app.NewClient(t)
		harness.MustSignUp(t, c, "Ada", harness.Email(t, "ada@example.com"), harness.TfPassword)
		enable := func(password string) *harness.Response {
			return c.Post("/api/auth/two-factor/enable", harness.MustJSON(t, map[string]any{"password": password, "method": "otp"}))
		}
		harness.MustCode(t, enable("not the password"), http.StatusBadRequest, "INVALID_PASSWORD")
		old := c.Clone()
		body := harness.MustOK(t, enable(harness.TfPassword))
		if len(body) != 1 || body["method"] != "otp" {
			t.Fatalf("enable otp = %v, want exactly {method: otp}", body)
		}
		harness.MustNoSession(t, old)
		if on := harness.MustUser(t, harness.MustSession(t, c))["twoFactorEnabled"]; on != true {
			t.Fatalf("twoFactorEnabled after enable otp = %v", on)
		}
		ch := app.NewClient(t)
		if r := harness.MustOK(t, ch.Post("/api/auth/sign-in/email", harness.MustCredentials(t, harness.Email(t, "ada@example.com"), harness.TfPassword))); r["twoFactorRedirect"] != true {
			t.Fatalf("sign-in = %v, want twoFactorRedirect", r)
		}
		harness.MustOK(t, ch.Post("/api/auth/two-factor/send-otp", "{}"))
		m := app.Mail.WaitFor(t, harness.Email(t, "ada@example.com"), "sign-in code", harness.MailWait)
		found := harness.OTPPattern.FindStringSubmatch(m.Text)
		if found == nil {
			t.Fatalf("no code in %s", m.Text)
		}
		harness.MustOK(t, ch.Post("/api/auth/two-factor/verify-otp", harness.MustJSON(t, map[string]any{"code": found[1]})))
		harness.MustSession(t, ch)
	})
}
