package harness

import (
	"encoding/base32"
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

const TfPassword = "correct horse battery"

// TfUser is a signed-in user with two-factor on, and their TOTP secret and
// backup codes.
type TfUser struct {
	Email   string
	Secret  []byte
	Backups []string
	C       *Client
	// enrolCode is the code that confirmed enrolment: used, so refused.
	EnrolCode string
}

// TOTPSecretOf returns the secret of an otpauth:// URI.
func TOTPSecretOf(t testing.TB, uri string) []byte {
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

// TOTPAt returns the code of secret for the step delta steps from now on
// clock, the server's. In the last two seconds of a step it first advances
// clock to the next one: a code worked out then could reach the server a
// step later, where the step before the previous one is out of its window
// (CI saw it refused once).
func TOTPAt(clock *Clock, secret []byte, delta int64) string {
	now := clock.Now()
	period := int64(domain.TOTPPeriod / time.Second)
	if left := time.Duration(period-now.Unix()%period)*time.Second - time.Duration(now.Nanosecond()); left < 2*time.Second {
		clock.Advance(left + 10*time.Millisecond)
		now = clock.Now()
	}
	return domain.TOTPCode(secret, domain.TOTPStep(now)+delta, 6)
}

// MustTwoFactorUser signs up email, enables two-factor and confirms it with
// the code of the previous step (so the current and next steps stay free).
func MustTwoFactorUser(t *testing.T, app *App, email string) *TfUser {
	t.Helper()
	c := app.NewClient(t)
	MustSignUp(t, c, "Ada", email, TfPassword)
	en := MustOK(t, c.Post("/api/auth/two-factor/enable", MustJSON(t, map[string]any{"password": TfPassword})))
	uri, _ := en["totpURI"].(string)
	codes, _ := en["backupCodes"].([]any)
	if len(codes) != 10 {
		t.Fatalf("enable = %v, want 10 backup codes", en)
	}
	u := &TfUser{Email: email, Secret: TOTPSecretOf(t, uri), C: c}
	for _, code := range codes {
		u.Backups = append(u.Backups, code.(string))
	}
	if on := MustUser(t, MustSession(t, c))["twoFactorEnabled"]; on != false {
		t.Fatalf("twoFactorEnabled before the first code = %v, want false", on)
	}
	u.EnrolCode = TOTPAt(app.Clock, u.Secret, -1)
	MustOK(t, c.Post("/api/auth/two-factor/verify-totp", MustJSON(t, map[string]any{"code": u.EnrolCode})))
	if on := MustUser(t, MustSession(t, c))["twoFactorEnabled"]; on != true {
		t.Fatalf("twoFactorEnabled after the first code = %v, want true", on)
	}
	MustCode(t, c.Post("/api/auth/two-factor/enable", MustJSON(t, map[string]any{"password": TfPassword})), http.StatusBadRequest, "TOTP_ALREADY_ENABLED")
	return u
}

// MustChallenge signs u in with the password and returns the client holding
// the two_factor cookie; no session is started.
func MustChallenge(t *testing.T, app *App, u *TfUser) *Client {
	t.Helper()
	c := app.NewClient(t)
	r := c.Post("/api/auth/sign-in/email", MustCredentials(t, u.Email, TfPassword))
	body := MustOK(t, r)
	if body["twoFactorRedirect"] != true || len(body) != 2 {
		t.Fatalf("sign-in = %s, want exactly {twoFactorRedirect:true, twoFactorMethods}", r.Body)
	}
	if c.Cookies["gatehouse.session_token"] != "" || c.Cookies["gatehouse.two_factor"] == "" {
		t.Fatalf("sign-in cookies = %v, want two_factor and no session", c.Cookies)
	}
	if line := strings.ToLower(RawSetCookie(r, "gatehouse.two_factor")); !strings.Contains(line, "max-age=600") || !strings.Contains(line, "httponly") {
		t.Fatalf("two_factor cookie = %q, want HttpOnly, Max-Age=600", line)
	}
	MustNoSession(t, c)
	return c
}

func VerifyTOTP(t *testing.T, c *Client, code string) *Response {
	t.Helper()
	return c.Post("/api/auth/two-factor/verify-totp", MustJSON(t, map[string]any{"code": code}))
}

// OTPPattern finds the code in a two-factor code mail.
var OTPPattern = regexp.MustCompile(`(?m)^\s*(\d{6})\s*$`)

// SessionFactors returns the session's authMethods and secondFactorAt as
// get-session says, and the amr and acr of the framework token.
func SessionFactors(t *testing.T, c *Client) (methods []any, secondFactorAt any, amr []any, acr any) {
	t.Helper()
	s, _ := MustSession(t, c)["session"].(map[string]any)
	methods, _ = s["authMethods"].([]any)
	tok, _ := MustOK(t, c.Get("/api/auth/token"))["token"].(string)
	_, claims := MustVerifyJWT(t, c, tok)
	amr, _ = claims["amr"].([]any)
	return methods, s["secondFactorAt"], amr, claims["acr"]
}
