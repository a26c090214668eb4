package mfa

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/harness"
)

// flipFirst returns v with its first character changed.
func flipFirst(v string) string {
	if v[0] == 'A' {
		return "B" + v[1:]
	}
	return "A" + v[1:]
}

func TestTwoFactor_sign_in(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "ada@example.com"))

		c := harness.MustChallenge(t, app, u)
		// Codes are kept, not recomputed: a 30-second boundary between two
		// computations would give a new, unused code.
		harness.MustCode(t, harness.VerifyTOTP(t, c, u.EnrolCode), http.StatusUnauthorized, "INVALID_CODE") // the enrolment code, replayed
		code := harness.TOTPAt(app.Clock, u.Secret, 0)
		r := harness.VerifyTOTP(t, c, code)
		body := harness.MustOK(t, r)
		if tok, _ := body["token"].(string); len(tok) != 32 || c.Cookies["gatehouse.two_factor"] != "" {
			t.Fatalf("verify-totp = %s, cookies %v; want a token and the two_factor cookie expired", r.Body, c.Cookies)
		}
		harness.MustSession(t, c)
		harness.MustCode(t, harness.VerifyTOTP(t, c, "000000"), http.StatusUnauthorized, "INVALID_CODE") // session path

		// The code just accepted is refused on the next challenge.
		c2 := harness.MustChallenge(t, app, u)
		harness.MustCode(t, harness.VerifyTOTP(t, c2, code), http.StatusUnauthorized, "INVALID_CODE")
		harness.MustOK(t, harness.VerifyTOTP(t, c2, harness.TOTPAt(app.Clock, u.Secret, 1)))

		// A backup code works once.
		c3 := harness.MustChallenge(t, app, u)
		backup := func(c *harness.Client) *harness.Response {
			return c.Post("/api/auth/two-factor/verify-backup-code", harness.MustJSON(t, map[string]any{"code": u.Backups[0]}))
		}
		harness.MustOK(t, backup(c3))
		harness.MustSession(t, c3)
		c4 := harness.MustChallenge(t, app, u)
		harness.MustCode(t, backup(c4), http.StatusUnauthorized, "INVALID_BACKUP_CODE")
		harness.MustNoSession(t, c4)

		// New backup codes replace the old ones.
		gen := harness.MustOK(t, c3.Post("/api/auth/two-factor/generate-backup-codes", harness.MustJSON(t, map[string]any{"password": harness.TfPassword})))
		fresh, _ := gen["backupCodes"].([]any)
		if len(fresh) != 10 {
			t.Fatalf("generate-backup-codes = %v", gen)
		}
		c5 := harness.MustChallenge(t, app, u)
		harness.MustCode(t, c5.Post("/api/auth/two-factor/verify-backup-code", harness.MustJSON(t, map[string]any{"code": u.Backups[1]})), http.StatusUnauthorized, "INVALID_BACKUP_CODE")
		harness.MustOK(t, c5.Post("/api/auth/two-factor/verify-backup-code", harness.MustJSON(t, map[string]any{"code": fresh[0]})))

		// get-totp-uri gives the same secret; disable turns it off.
		uri := harness.MustOK(t, c3.Post("/api/auth/two-factor/get-totp-uri", harness.MustJSON(t, map[string]any{"password": harness.TfPassword})))["totpURI"].(string)
		if string(harness.TOTPSecretOf(t, uri)) != string(u.Secret) {
			t.Fatal("get-totp-uri returned another secret")
		}
		harness.MustCode(t, c3.Post("/api/auth/two-factor/disable", harness.MustJSON(t, map[string]any{"password": "wrong password"})), http.StatusBadRequest, "INVALID_PASSWORD")
		harness.MustOK(t, c3.Post("/api/auth/two-factor/disable", harness.MustJSON(t, map[string]any{"password": harness.TfPassword})))
		harness.MustSignIn(t, app.NewClient(t), u.Email, harness.TfPassword)
	})
}

func TestTwoFactor_challenge_cookie(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		t.Run("tampered", func(t *testing.T) {
			u := harness.MustTwoFactorUser(t, app, harness.Email(t, "tampered@example.com"))
			c := harness.MustChallenge(t, app, u)
			v := c.Cookies["gatehouse.two_factor"]
			c.Cookies["gatehouse.two_factor"] = flipFirst(v)
			harness.MustCode(t, harness.VerifyTOTP(t, c, harness.TOTPAt(app.Clock, u.Secret, 0)), http.StatusUnauthorized, "INVALID_TWO_FACTOR_COOKIE")
			delete(c.Cookies, "gatehouse.two_factor")
			harness.MustCode(t, harness.VerifyTOTP(t, c, harness.TOTPAt(app.Clock, u.Secret, 0)), http.StatusUnauthorized, "INVALID_TWO_FACTOR_COOKIE")
			harness.MustNoSession(t, c)
		})
		t.Run("five_wrong_codes", func(t *testing.T) {
			u := harness.MustTwoFactorUser(t, app, harness.Email(t, "five@example.com"))
			c := harness.MustChallenge(t, app, u)
			kept := c.Clone() // a browser that keeps the cookie anyway
			for i := 0; i < 4; i++ {
				harness.MustCode(t, harness.VerifyTOTP(t, c, "000000"), http.StatusUnauthorized, "INVALID_CODE")
			}
			harness.MustCode(t, harness.VerifyTOTP(t, c, "000000"), http.StatusBadRequest, "TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE")
			if c.Cookies["gatehouse.two_factor"] != "" {
				t.Fatal("the two_factor cookie outlived the exhausted challenge")
			}
			// The challenge is gone, even with its cookie and the right code.
			harness.MustCode(t, harness.VerifyTOTP(t, kept, harness.TOTPAt(app.Clock, u.Secret, 0)), http.StatusUnauthorized, "INVALID_TWO_FACTOR_COOKIE")
			harness.MustNoSession(t, kept)
			harness.MustOK(t, harness.VerifyTOTP(t, harness.MustChallenge(t, app, u), harness.TOTPAt(app.Clock, u.Secret, 0)))
		})
		t.Run("hostile_input", func(t *testing.T) {
			u := harness.MustTwoFactorUser(t, app, harness.Email(t, "hostile@example.com"))
			c := harness.MustChallenge(t, app, u)
			for name, body := range map[string]string{
				"nul":          `{"code":"12\u00003456"}`,
				"invalid_utf8": "{\"code\":\"12\xff3456\"}",
				"huge":         harness.MustJSON(t, map[string]any{"code": strings.Repeat("1", 100000)}),
			} {
				r := c.Post("/api/auth/two-factor/verify-totp", body)
				if msg := harness.MustCode(t, r, http.StatusBadRequest, "VALIDATION_ERROR"); !strings.Contains(msg, "body.code") {
					t.Fatalf("%s: %s does not name the field", name, r.Body)
				}
			}
			// Refused input is not a wrong answer: the challenge still takes the code.
			harness.MustOK(t, harness.VerifyTOTP(t, c, harness.TOTPAt(app.Clock, u.Secret, 0)))
		})
		t.Run("unauthenticated", func(t *testing.T) {
			c := app.NewClient(t)
			for _, path := range []string{"enable", "disable", "get-totp-uri", "generate-backup-codes"} {
				harness.MustCode(t, c.Post("/api/auth/two-factor/"+path, harness.MustJSON(t, map[string]any{"password": harness.TfPassword})), http.StatusUnauthorized, "UNAUTHORIZED")
			}
		})
	})
}

// Ensure an expired challenge is refused: the app's clock moves past its
// ten minutes.
func TestTwoFactor_challenge_expired(t *testing.T) {
	t.Parallel()
	harness.ForStores(t, harness.SQLOnly(harness.StoresThatMatter), harness.FwQuick, func(t *testing.T, app *harness.App) {
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "ada@example.com"))
		c := harness.MustChallenge(t, app, u)
		app.Clock.Advance(10*time.Minute + time.Second)
		harness.MustCode(t, harness.VerifyTOTP(t, c, harness.TOTPAt(app.Clock, u.Secret, 0)), http.StatusUnauthorized, "INVALID_TWO_FACTOR_COOKIE")
		harness.MustNoSession(t, c)
	})
}

// Ensure wrong second-factor codes count towards the account lockout: with
// a threshold of 3, the right code is refused after three wrong ones, across
// challenges, and so is the password, until the cooldown ends.
func TestTwoFactor_lockout(t *testing.T) {
	t.Parallel()
	env := harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_LOCKOUT_THRESHOLD": "3", "GATEHOUSE_LOCKOUT_COOLDOWN": "1m"})
	harness.ForStores(t, harness.StoresThatMatter, env, func(t *testing.T, app *harness.App) {
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "ada@example.com"))
		c := harness.MustChallenge(t, app, u)
		harness.MustCode(t, harness.VerifyTOTP(t, c, "000000"), http.StatusUnauthorized, "INVALID_CODE")
		harness.MustCode(t, harness.VerifyTOTP(t, c, "000000"), http.StatusUnauthorized, "INVALID_CODE")
		c2 := harness.MustChallenge(t, app, u)
		harness.MustCode(t, c2.Post("/api/auth/two-factor/verify-backup-code", harness.MustJSON(t, map[string]any{"code": "nope0-nope0"})), http.StatusUnauthorized, "INVALID_BACKUP_CODE")
		harness.MustCode(t, harness.VerifyTOTP(t, c2, harness.TOTPAt(app.Clock, u.Secret, 0)), http.StatusTooManyRequests, "ACCOUNT_TEMPORARILY_LOCKED")
		harness.MustSignInFails(t, app, u.Email, harness.TfPassword)
		app.Clock.Advance(time.Minute + time.Second)
		c3 := harness.MustChallenge(t, app, u)
		harness.MustOK(t, harness.VerifyTOTP(t, c3, harness.TOTPAt(app.Clock, u.Secret, 0)))
	})
}

// Ensure trustDevice on a challenge's answer sets the signed trust_device
// cookie, which skips the challenge at the next sign-in of that user only,
// is replaced at each use, and does nothing when forged or after disable.
func TestTwoFactor_trust_device(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "ada@example.com"))
		other := harness.MustTwoFactorUser(t, app, harness.Email(t, "bob@example.com"))
		const name = "gatehouse.trust_device"

		c := harness.MustChallenge(t, app, u)
		r := c.Post("/api/auth/two-factor/verify-totp", harness.MustJSON(t, map[string]any{"code": harness.TOTPAt(app.Clock, u.Secret, 0), "trustDevice": true}))
		harness.MustOK(t, r)
		if line := strings.ToLower(harness.RawSetCookie(r, name)); !strings.Contains(line, "max-age=2592000") || !strings.Contains(line, "httponly") {
			t.Fatalf("trust_device cookie = %q, want HttpOnly, Max-Age=2592000", line)
		}
		first := c.Cookies[name]

		// A browser holding only the trust cookie signs in without a challenge.
		b := app.NewClient(t)
		b.Cookies[name] = first
		harness.MustSignIn(t, b, u.Email, harness.TfPassword)
		if b.Cookies[name] == "" || b.Cookies[name] == first {
			t.Fatal("the trust_device cookie was not replaced at its use")
		}
		// The replaced value no longer skips it.
		replayed := app.NewClient(t)
		replayed.Cookies[name] = first
		body := harness.MustOK(t, replayed.Post("/api/auth/sign-in/email", harness.MustCredentials(t, u.Email, harness.TfPassword)))
		if body["twoFactorRedirect"] != true {
			t.Fatalf("sign-in with a used trust cookie = %v, want a challenge", body)
		}

		// Forged: another value signed with the wrong secret, or tampered.
		for _, forged := range []string{flipFirst(b.Cookies[name]), b.Cookies[name][:len(b.Cookies[name])-4] + "AAA%3D"} {
			f := app.NewClient(t)
			f.Cookies[name] = forged
			if body := harness.MustOK(t, f.Post("/api/auth/sign-in/email", harness.MustCredentials(t, u.Email, harness.TfPassword))); body["twoFactorRedirect"] != true {
				t.Fatalf("sign-in with a forged trust cookie = %v, want a challenge", body)
			}
		}
		// Another user's sign-in in the trusted browser gets the challenge,
		// and leaves the browser trusted for its own user.
		o := b.Clone()
		if body := harness.MustOK(t, o.Post("/api/auth/sign-in/email", harness.MustCredentials(t, other.Email, harness.TfPassword))); body["twoFactorRedirect"] != true {
			t.Fatalf("another user's sign-in with the trust cookie = %v, want a challenge", body)
		}
		harness.MustSignIn(t, b, u.Email, harness.TfPassword)

		// Disable forgets every trusted browser.
		d := harness.MustChallenge(t, app, u)
		harness.MustOK(t, d.Post("/api/auth/two-factor/verify-totp", harness.MustJSON(t, map[string]any{"code": harness.TOTPAt(app.Clock, u.Secret, 1), "trustDevice": true})))
		harness.MustOK(t, d.Post("/api/auth/two-factor/disable", harness.MustJSON(t, map[string]any{"password": harness.TfPassword})))
		if d.Cookies[name] != "" {
			t.Fatal("disable did not expire the trust_device cookie")
		}
	})
}

// Ensure send-otp mails a code for the pending challenge, verify-otp
// answers with it once, a wrong code is refused and counted, and neither
// works without a challenge.
func TestTwoFactor_email_code(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "ada@example.com"))
		c := harness.MustChallenge(t, app, u)
		verify := func(c *harness.Client, code string) *harness.Response {
			return c.Post("/api/auth/two-factor/verify-otp", harness.MustJSON(t, map[string]any{"code": code}))
		}
		harness.MustCode(t, verify(c, "123456"), http.StatusBadRequest, "OTP_HAS_EXPIRED") // none sent yet
		harness.MustOK(t, c.Post("/api/auth/two-factor/send-otp", "{}"))
		m := app.Mail.WaitFor(t, u.Email, "sign-in code", harness.MailWait)
		found := harness.OTPPattern.FindStringSubmatch(m.Text)
		if found == nil {
			t.Fatalf("no code in mail %q: %s", m.Subject, m.Text)
		}
		code := found[1]
		wrong := "000000"
		if code == wrong {
			wrong = "111111"
		}
		harness.MustCode(t, verify(c, wrong), http.StatusUnauthorized, "INVALID_CODE")
		harness.MustOK(t, verify(c, code))
		harness.MustSession(t, c)

		// The code went with its challenge; without one, nothing is sent.
		c2 := harness.MustChallenge(t, app, u)
		harness.MustCode(t, verify(c2, code), http.StatusBadRequest, "OTP_HAS_EXPIRED")
		harness.MustCode(t, app.NewClient(t).Post("/api/auth/two-factor/send-otp", "{}"), http.StatusUnauthorized, "INVALID_TWO_FACTOR_COOKIE")
		harness.MustCode(t, verify(app.NewClient(t), code), http.StatusUnauthorized, "INVALID_TWO_FACTOR_COOKIE")
	})
}

// TestTwoFactor_session_factors: get-session and the framework token say
// which factors the session holds (RFC 8176 methods), and a code answered
// in a session steps it up.
func TestTwoFactor_session_factors(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		plain := app.NewClient(t)
		harness.MustSignUp(t, plain, "Bo", harness.Email(t, "bo@example.com"), harness.TfPassword)
		m, at, amr, acr := harness.SessionFactors(t, plain)
		if fmt.Sprint(m) != "[pwd]" || at != nil || fmt.Sprint(amr) != "[pwd]" || acr != domain.ACRPassword {
			t.Fatalf("password session: authMethods %v, secondFactorAt %v, amr %v, acr %v", m, at, amr, acr)
		}

		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "ada@example.com"))
		// The enrolment's first code was answered in the session: stepped up.
		m, at, amr, acr = harness.SessionFactors(t, u.C)
		if fmt.Sprint(m) != "[pwd otp mfa]" || at == nil || fmt.Sprint(amr) != "[pwd otp mfa]" || acr != domain.ACRMultiFactor {
			t.Fatalf("enrolment session: authMethods %v, secondFactorAt %v, amr %v, acr %v", m, at, amr, acr)
		}

		c := harness.MustChallenge(t, app, u)
		harness.MustOK(t, harness.VerifyTOTP(t, c, harness.TOTPAt(app.Clock, u.Secret, 0)))
		m, at, amr, acr = harness.SessionFactors(t, c)
		if fmt.Sprint(m) != "[pwd otp mfa]" || at == nil || fmt.Sprint(amr) != "[pwd otp mfa]" || acr != domain.ACRMultiFactor {
			t.Fatalf("two-factor sign-in: authMethods %v, secondFactorAt %v, amr %v, acr %v", m, at, amr, acr)
		}
		harness.MustJSDates(t, harness.MustSession(t, c)["session"].(map[string]any), "secondFactorAt")
	})
}
