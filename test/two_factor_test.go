package test

import (
	"encoding/base32"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// The two-factor plugin's routes (docs/multi-factor.md), from outside: TOTP
// enrolment, the sign-in challenge carried by the signed two_factor cookie,
// backup codes, replay refusal, the five-attempt cap, the account lockout
// and hostile input.

const tfPassword = "correct horse battery"

// tfUser is a signed-in user with two-factor on, and their TOTP secret and
// backup codes.
type tfUser struct {
	email   string
	secret  []byte
	backups []string
	c       *fwClient
	// enrolCode is the code that confirmed enrolment: used, so refused.
	enrolCode string
}

// totpSecretOf returns the secret of an otpauth:// URI.
func totpSecretOf(t testing.TB, uri string) []byte {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "otpauth" {
		t.Fatalf("totpURI %q: %v", uri, err)
	}
	secret, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(u.Query().Get("secret"))
	if err != nil {
		t.Fatalf("totpURI secret: %v", err)
	}
	return secret
}

// totpAt returns the code of secret for the step delta steps from now. In
// the last two seconds of a step it first waits for the next one: a code
// worked out then could reach the server a step later, where the step
// before the previous one is out of its window (CI saw it refused once).
func totpAt(secret []byte, delta int64) string {
	now := time.Now()
	period := int64(domain.TOTPPeriod / time.Second)
	if left := time.Duration(period-now.Unix()%period)*time.Second - time.Duration(now.Nanosecond()); left < 2*time.Second {
		time.Sleep(left + 10*time.Millisecond)
		now = time.Now()
	}
	return domain.TOTPCode(secret, domain.TOTPStep(now)+delta, 6)
}

// mustTwoFactorUser signs up email, enables two-factor and confirms it with
// the code of the previous step (so the current and next steps stay free).
func mustTwoFactorUser(t *testing.T, app *fwApp, email string) *tfUser {
	t.Helper()
	c := app.client(t)
	mustSignUp(t, c, "Ada", email, tfPassword)
	en := mustOK(t, c.post("/api/auth/two-factor/enable", mustJSON(t, map[string]any{"password": tfPassword})))
	uri, _ := en["totpURI"].(string)
	codes, _ := en["backupCodes"].([]any)
	if len(codes) != 10 {
		t.Fatalf("enable = %v, want 10 backup codes", en)
	}
	u := &tfUser{email: email, secret: totpSecretOf(t, uri), c: c}
	for _, code := range codes {
		u.backups = append(u.backups, code.(string))
	}
	if on := mustUser(t, mustSession(t, c))["twoFactorEnabled"]; on != false {
		t.Fatalf("twoFactorEnabled before the first code = %v, want false", on)
	}
	u.enrolCode = totpAt(u.secret, -1)
	mustOK(t, c.post("/api/auth/two-factor/verify-totp", mustJSON(t, map[string]any{"code": u.enrolCode})))
	if on := mustUser(t, mustSession(t, c))["twoFactorEnabled"]; on != true {
		t.Fatalf("twoFactorEnabled after the first code = %v, want true", on)
	}
	mustCode(t, c.post("/api/auth/two-factor/enable", mustJSON(t, map[string]any{"password": tfPassword})), http.StatusBadRequest, "TOTP_ALREADY_ENABLED")
	return u
}

// mustChallenge signs u in with the password and returns the client holding
// the two_factor cookie; no session is started.
func mustChallenge(t *testing.T, app *fwApp, u *tfUser) *fwClient {
	t.Helper()
	c := app.client(t)
	r := c.post("/api/auth/sign-in/email", mustCredentials(t, u.email, tfPassword))
	body := mustOK(t, r)
	if body["twoFactorRedirect"] != true || len(body) != 2 {
		t.Fatalf("sign-in = %s, want exactly {twoFactorRedirect:true, twoFactorMethods}", r.Body)
	}
	if c.Cookies["gatehouse.session_token"] != "" || c.Cookies["gatehouse.two_factor"] == "" {
		t.Fatalf("sign-in cookies = %v, want two_factor and no session", c.Cookies)
	}
	if line := strings.ToLower(rawSetCookie(r, "gatehouse.two_factor")); !strings.Contains(line, "max-age=600") || !strings.Contains(line, "httponly") {
		t.Fatalf("two_factor cookie = %q, want HttpOnly, Max-Age=600", line)
	}
	mustNoSession(t, c)
	return c
}

// flipFirst returns v with its first character changed.
func flipFirst(v string) string {
	if v[0] == 'A' {
		return "B" + v[1:]
	}
	return "A" + v[1:]
}

func verifyTOTP(t *testing.T, c *fwClient, code string) *response {
	t.Helper()
	return c.post("/api/auth/two-factor/verify-totp", mustJSON(t, map[string]any{"code": code}))
}

func TestTwoFactor_sign_in(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		u := mustTwoFactorUser(t, app, "ada@example.com")

		c := mustChallenge(t, app, u)
		// Codes are kept, not recomputed: a 30-second boundary between two
		// computations would give a new, unused code.
		mustCode(t, verifyTOTP(t, c, u.enrolCode), http.StatusUnauthorized, "INVALID_CODE") // the enrolment code, replayed
		code := totpAt(u.secret, 0)
		r := verifyTOTP(t, c, code)
		body := mustOK(t, r)
		if tok, _ := body["token"].(string); len(tok) != 32 || c.Cookies["gatehouse.two_factor"] != "" {
			t.Fatalf("verify-totp = %s, cookies %v; want a token and the two_factor cookie expired", r.Body, c.Cookies)
		}
		mustSession(t, c)
		mustCode(t, verifyTOTP(t, c, "000000"), http.StatusUnauthorized, "INVALID_CODE") // session path

		// The code just accepted is refused on the next challenge.
		c2 := mustChallenge(t, app, u)
		mustCode(t, verifyTOTP(t, c2, code), http.StatusUnauthorized, "INVALID_CODE")
		mustOK(t, verifyTOTP(t, c2, totpAt(u.secret, 1)))

		// A backup code works once.
		c3 := mustChallenge(t, app, u)
		backup := func(c *fwClient) *response {
			return c.post("/api/auth/two-factor/verify-backup-code", mustJSON(t, map[string]any{"code": u.backups[0]}))
		}
		mustOK(t, backup(c3))
		mustSession(t, c3)
		c4 := mustChallenge(t, app, u)
		mustCode(t, backup(c4), http.StatusUnauthorized, "INVALID_BACKUP_CODE")
		mustNoSession(t, c4)

		// New backup codes replace the old ones.
		gen := mustOK(t, c3.post("/api/auth/two-factor/generate-backup-codes", mustJSON(t, map[string]any{"password": tfPassword})))
		fresh, _ := gen["backupCodes"].([]any)
		if len(fresh) != 10 {
			t.Fatalf("generate-backup-codes = %v", gen)
		}
		c5 := mustChallenge(t, app, u)
		mustCode(t, c5.post("/api/auth/two-factor/verify-backup-code", mustJSON(t, map[string]any{"code": u.backups[1]})), http.StatusUnauthorized, "INVALID_BACKUP_CODE")
		mustOK(t, c5.post("/api/auth/two-factor/verify-backup-code", mustJSON(t, map[string]any{"code": fresh[0]})))

		// get-totp-uri gives the same secret; disable turns it off.
		uri := mustOK(t, c3.post("/api/auth/two-factor/get-totp-uri", mustJSON(t, map[string]any{"password": tfPassword})))["totpURI"].(string)
		if string(totpSecretOf(t, uri)) != string(u.secret) {
			t.Fatal("get-totp-uri returned another secret")
		}
		mustCode(t, c3.post("/api/auth/two-factor/disable", mustJSON(t, map[string]any{"password": "wrong password"})), http.StatusBadRequest, "INVALID_PASSWORD")
		mustOK(t, c3.post("/api/auth/two-factor/disable", mustJSON(t, map[string]any{"password": tfPassword})))
		mustSignIn(t, app.client(t), u.email, tfPassword)
	})
}

func TestTwoFactor_challenge_cookie(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		t.Run("tampered", func(t *testing.T) {
			u := mustTwoFactorUser(t, app, "tampered@example.com")
			c := mustChallenge(t, app, u)
			v := c.Cookies["gatehouse.two_factor"]
			c.Cookies["gatehouse.two_factor"] = flipFirst(v)
			mustCode(t, verifyTOTP(t, c, totpAt(u.secret, 0)), http.StatusUnauthorized, "INVALID_TWO_FACTOR_COOKIE")
			delete(c.Cookies, "gatehouse.two_factor")
			mustCode(t, verifyTOTP(t, c, totpAt(u.secret, 0)), http.StatusUnauthorized, "INVALID_TWO_FACTOR_COOKIE")
			mustNoSession(t, c)
		})
		t.Run("five_wrong_codes", func(t *testing.T) {
			u := mustTwoFactorUser(t, app, "five@example.com")
			c := mustChallenge(t, app, u)
			kept := c.clone() // a browser that keeps the cookie anyway
			for i := 0; i < 4; i++ {
				mustCode(t, verifyTOTP(t, c, "000000"), http.StatusUnauthorized, "INVALID_CODE")
			}
			mustCode(t, verifyTOTP(t, c, "000000"), http.StatusBadRequest, "TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE")
			if c.Cookies["gatehouse.two_factor"] != "" {
				t.Fatal("the two_factor cookie outlived the exhausted challenge")
			}
			// The challenge is gone, even with its cookie and the right code.
			mustCode(t, verifyTOTP(t, kept, totpAt(u.secret, 0)), http.StatusUnauthorized, "INVALID_TWO_FACTOR_COOKIE")
			mustNoSession(t, kept)
			mustOK(t, verifyTOTP(t, mustChallenge(t, app, u), totpAt(u.secret, 0)))
		})
		t.Run("hostile_input", func(t *testing.T) {
			u := mustTwoFactorUser(t, app, "hostile@example.com")
			c := mustChallenge(t, app, u)
			for name, body := range map[string]string{
				"nul":          `{"code":"12\u00003456"}`,
				"invalid_utf8": "{\"code\":\"12\xff3456\"}",
				"huge":         mustJSON(t, map[string]any{"code": strings.Repeat("1", 100000)}),
			} {
				r := c.post("/api/auth/two-factor/verify-totp", body)
				if msg := mustCode(t, r, http.StatusBadRequest, "VALIDATION_ERROR"); !strings.Contains(msg, "body.code") {
					t.Fatalf("%s: %s does not name the field", name, r.Body)
				}
			}
			// Refused input is not a wrong answer: the challenge still takes the code.
			mustOK(t, verifyTOTP(t, c, totpAt(u.secret, 0)))
		})
		t.Run("unauthenticated", func(t *testing.T) {
			c := app.client(t)
			for _, path := range []string{"enable", "disable", "get-totp-uri", "generate-backup-codes"} {
				mustCode(t, c.post("/api/auth/two-factor/"+path, mustJSON(t, map[string]any{"password": tfPassword})), http.StatusUnauthorized, "UNAUTHORIZED")
			}
		})
	})
}

// Ensure an expired challenge is refused: its row is moved into the past
// (the service's clock is the system's).
func TestTwoFactor_challenge_expired(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesThatMatter, fwQuick, func(t *testing.T, app *fwApp) {
		u := mustTwoFactorUser(t, app, "ada@example.com")
		c := mustChallenge(t, app, u)
		if err := mustDB(t, app).Exec("UPDATE mfa_challenges SET expires_at = ?", time.Now().Add(-time.Second)).Error; err != nil {
			t.Fatal(err)
		}
		mustCode(t, verifyTOTP(t, c, totpAt(u.secret, 0)), http.StatusUnauthorized, "INVALID_TWO_FACTOR_COOKIE")
		mustNoSession(t, c)
	})
}

// Ensure wrong second-factor codes count towards the account lockout: with
// a threshold of 3, the right code is refused after three wrong ones, across
// challenges, and so is the password.
func TestTwoFactor_lockout(t *testing.T) {
	t.Parallel()
	env := fwEnv(fwQuick, map[string]string{"GATEHOUSE_LOCKOUT_THRESHOLD": "3", "GATEHOUSE_LOCKOUT_COOLDOWN": "1s"})
	fwForStores(t, storesThatMatter, env, func(t *testing.T, app *fwApp) {
		u := mustTwoFactorUser(t, app, "ada@example.com")
		c := mustChallenge(t, app, u)
		mustCode(t, verifyTOTP(t, c, "000000"), http.StatusUnauthorized, "INVALID_CODE")
		mustCode(t, verifyTOTP(t, c, "000000"), http.StatusUnauthorized, "INVALID_CODE")
		c2 := mustChallenge(t, app, u)
		mustCode(t, c2.post("/api/auth/two-factor/verify-backup-code", mustJSON(t, map[string]any{"code": "nope0-nope0"})), http.StatusUnauthorized, "INVALID_BACKUP_CODE")
		mustCode(t, verifyTOTP(t, c2, totpAt(u.secret, 0)), http.StatusTooManyRequests, "ACCOUNT_TEMPORARILY_LOCKED")
		mustSignInFails(t, app, u.email, tfPassword)
		time.Sleep(1100 * time.Millisecond)
		c3 := mustChallenge(t, app, u)
		mustOK(t, verifyTOTP(t, c3, totpAt(u.secret, 0)))
	})
}

// Ensure trustDevice on a challenge's answer sets the signed trust_device
// cookie, which skips the challenge at the next sign-in of that user only,
// is replaced at each use, and does nothing when forged or after disable.
func TestTwoFactor_trust_device(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		u := mustTwoFactorUser(t, app, "ada@example.com")
		other := mustTwoFactorUser(t, app, "bob@example.com")
		const name = "gatehouse.trust_device"

		c := mustChallenge(t, app, u)
		r := c.post("/api/auth/two-factor/verify-totp", mustJSON(t, map[string]any{"code": totpAt(u.secret, 0), "trustDevice": true}))
		mustOK(t, r)
		if line := strings.ToLower(rawSetCookie(r, name)); !strings.Contains(line, "max-age=2592000") || !strings.Contains(line, "httponly") {
			t.Fatalf("trust_device cookie = %q, want HttpOnly, Max-Age=2592000", line)
		}
		first := c.Cookies[name]

		// A browser holding only the trust cookie signs in without a challenge.
		b := app.client(t)
		b.Cookies[name] = first
		mustSignIn(t, b, u.email, tfPassword)
		if b.Cookies[name] == "" || b.Cookies[name] == first {
			t.Fatal("the trust_device cookie was not replaced at its use")
		}
		// The replaced value no longer skips it.
		replayed := app.client(t)
		replayed.Cookies[name] = first
		body := mustOK(t, replayed.post("/api/auth/sign-in/email", mustCredentials(t, u.email, tfPassword)))
		if body["twoFactorRedirect"] != true {
			t.Fatalf("sign-in with a used trust cookie = %v, want a challenge", body)
		}

		// Forged: another value signed with the wrong secret, or tampered.
		for _, forged := range []string{flipFirst(b.Cookies[name]), b.Cookies[name][:len(b.Cookies[name])-4] + "AAA%3D"} {
			f := app.client(t)
			f.Cookies[name] = forged
			if body := mustOK(t, f.post("/api/auth/sign-in/email", mustCredentials(t, u.email, tfPassword))); body["twoFactorRedirect"] != true {
				t.Fatalf("sign-in with a forged trust cookie = %v, want a challenge", body)
			}
		}
		// Another user's sign-in in the trusted browser gets the challenge,
		// and leaves the browser trusted for its own user.
		o := b.clone()
		if body := mustOK(t, o.post("/api/auth/sign-in/email", mustCredentials(t, other.email, tfPassword))); body["twoFactorRedirect"] != true {
			t.Fatalf("another user's sign-in with the trust cookie = %v, want a challenge", body)
		}
		mustSignIn(t, b, u.email, tfPassword)

		// Disable forgets every trusted browser.
		d := mustChallenge(t, app, u)
		mustOK(t, d.post("/api/auth/two-factor/verify-totp", mustJSON(t, map[string]any{"code": totpAt(u.secret, 1), "trustDevice": true})))
		mustOK(t, d.post("/api/auth/two-factor/disable", mustJSON(t, map[string]any{"password": tfPassword})))
		if d.Cookies[name] != "" {
			t.Fatal("disable did not expire the trust_device cookie")
		}
	})
}

// otpPattern finds the code in a two-factor code mail.
var otpPattern = regexp.MustCompile(`(?m)^\s*(\d{6})\s*$`)

// Ensure send-otp mails a code for the pending challenge, verify-otp
// answers with it once, a wrong code is refused and counted, and neither
// works without a challenge.
func TestTwoFactor_email_code(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		u := mustTwoFactorUser(t, app, "ada@example.com")
		c := mustChallenge(t, app, u)
		verify := func(c *fwClient, code string) *response {
			return c.post("/api/auth/two-factor/verify-otp", mustJSON(t, map[string]any{"code": code}))
		}
		mustCode(t, verify(c, "123456"), http.StatusBadRequest, "OTP_HAS_EXPIRED") // none sent yet
		mustOK(t, c.post("/api/auth/two-factor/send-otp", "{}"))
		m := app.Mail.WaitFor(t, u.email, "sign-in code", mailWait)
		found := otpPattern.FindStringSubmatch(m.Text)
		if found == nil {
			t.Fatalf("no code in mail %q: %s", m.Subject, m.Text)
		}
		code := found[1]
		wrong := "000000"
		if code == wrong {
			wrong = "111111"
		}
		mustCode(t, verify(c, wrong), http.StatusUnauthorized, "INVALID_CODE")
		mustOK(t, verify(c, code))
		mustSession(t, c)

		// The code went with its challenge; without one, nothing is sent.
		c2 := mustChallenge(t, app, u)
		mustCode(t, verify(c2, code), http.StatusBadRequest, "OTP_HAS_EXPIRED")
		mustCode(t, app.client(t).post("/api/auth/two-factor/send-otp", "{}"), http.StatusUnauthorized, "INVALID_TWO_FACTOR_COOKIE")
		mustCode(t, verify(app.client(t), code), http.StatusUnauthorized, "INVALID_TWO_FACTOR_COOKIE")
	})
}

// sessionFactors returns the session's authMethods and secondFactorAt as
// get-session says, and the amr and acr of the framework token.
func sessionFactors(t *testing.T, c *fwClient) (methods []any, secondFactorAt any, amr []any, acr any) {
	t.Helper()
	s, _ := mustSession(t, c)["session"].(map[string]any)
	methods, _ = s["authMethods"].([]any)
	tok, _ := mustOK(t, c.get("/api/auth/token"))["token"].(string)
	_, claims := mustVerifyJWT(t, c, tok)
	amr, _ = claims["amr"].([]any)
	return methods, s["secondFactorAt"], amr, claims["acr"]
}

// TestTwoFactor_session_factors: get-session and the framework token say
// which factors the session holds (RFC 8176 methods), and a code answered
// in a session steps it up.
func TestTwoFactor_session_factors(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		plain := app.client(t)
		mustSignUp(t, plain, "Bo", "bo@example.com", tfPassword)
		m, at, amr, acr := sessionFactors(t, plain)
		if fmt.Sprint(m) != "[pwd]" || at != nil || fmt.Sprint(amr) != "[pwd]" || acr != domain.ACRPassword {
			t.Fatalf("password session: authMethods %v, secondFactorAt %v, amr %v, acr %v", m, at, amr, acr)
		}

		u := mustTwoFactorUser(t, app, "ada@example.com")
		// The enrolment's first code was answered in the session: stepped up.
		m, at, amr, acr = sessionFactors(t, u.c)
		if fmt.Sprint(m) != "[pwd otp mfa]" || at == nil || fmt.Sprint(amr) != "[pwd otp mfa]" || acr != domain.ACRMultiFactor {
			t.Fatalf("enrolment session: authMethods %v, secondFactorAt %v, amr %v, acr %v", m, at, amr, acr)
		}

		c := mustChallenge(t, app, u)
		mustOK(t, verifyTOTP(t, c, totpAt(u.secret, 0)))
		m, at, amr, acr = sessionFactors(t, c)
		if fmt.Sprint(m) != "[pwd otp mfa]" || at == nil || fmt.Sprint(amr) != "[pwd otp mfa]" || acr != domain.ACRMultiFactor {
			t.Fatalf("two-factor sign-in: authMethods %v, secondFactorAt %v, amr %v, acr %v", m, at, amr, acr)
		}
		mustJSDates(t, mustSession(t, c)["session"].(map[string]any), "secondFactorAt")
	})
}
