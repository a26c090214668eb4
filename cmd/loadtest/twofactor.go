package main

import (
	"context"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse/gatehouse/bootstrap"
	"github.com/gatehouse/gatehouse/domain"
)

// totpSignIns is the two-factor sign-in of the load run: sign-in/email,
// which answers twoFactorRedirect and sets the two_factor cookie, then
// verify-totp with the current code, which starts the session; one
// iteration is both requests. A TOTP code is accepted once per user (replay
// refusal), so each iteration signs in a user of its own, enrolled before
// the run; when they are used up the route ends early.
type totpSignIns struct {
	base   string
	origin string // the configured base URL, which the origin check wants
	users  []totpUser
	next   atomic.Int64
	cookie string // the two_factor cookie's name
}

type totpUser struct {
	email  string
	secret []byte
}

// totpPerSecond is how many two-factor sign-ins a second of the run can
// take, with room to spare: the password hash bounds sign-in well below it
// on a small machine.
const totpPerSecond = 60

func newTOTPSignIns(ctx context.Context, c *http.Client, base string, cfg bootstrap.Config, o options) (*totpSignIns, error) {
	n := max(20, int(o.duration.Seconds()*totpPerSecond))
	t := &totpSignIns{base: base, origin: strings.TrimRight(cfg.HTTP.BaseURL, "/"), users: make([]totpUser, n),
		cookie: strings.TrimSuffix(cfg.SessionCookieName(), "session_token") + "two_factor"}
	var wg sync.WaitGroup
	errs := make(chan error, o.signInConcurrency)
	var next atomic.Int64
	for range o.signInConcurrency {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				u, err := enrolTOTP(ctx, c, base, t.origin, fmt.Sprintf("totp-%d@example.com", i), cfg.SessionCookieName())
				if err != nil {
					errs <- err
					return
				}
				t.users[i] = u
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, fmt.Errorf("enrol two-factor users: %w", err)
	}
	return t, nil
}

// enrolTOTP signs up email, enables two-factor and confirms it with the code
// of the previous step, so the current step is free for the run.
func enrolTOTP(ctx context.Context, c *http.Client, base, origin, email, sessionCookie string) (totpUser, error) {
	cookie, err := signUpAs(ctx, c, base, sessionCookie, email)
	if err != nil {
		return totpUser{}, err
	}
	var en struct {
		TOTPURI string `json:"totpURI"`
	}
	if err := postJSON(ctx, c, origin, base+"/api/auth/two-factor/enable", cookie, `{"password":"`+password+`"}`, &en); err != nil {
		return totpUser{}, fmt.Errorf("enable: %w", err)
	}
	u, err := url.Parse(en.TOTPURI)
	if err != nil {
		return totpUser{}, err
	}
	secret, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(u.Query().Get("secret"))
	if err != nil {
		return totpUser{}, err
	}
	// A 30-second boundary between computing the code and the server
	// checking it can put the previous step out of reach: try again.
	for try := 0; ; try++ {
		code := domain.TOTPCode(secret, domain.TOTPStep(time.Now())-1, 6)
		err := postJSON(ctx, c, origin, base+"/api/auth/two-factor/verify-totp", cookie, `{"code":"`+code+`"}`, nil)
		if err == nil {
			return totpUser{email: email, secret: secret}, nil
		}
		if try == 2 {
			return totpUser{}, fmt.Errorf("verify-totp: %w", err)
		}
	}
}

// signIn is one iteration: both requests of the next unused user.
func (t *totpSignIns) signIn(ctx context.Context, c *http.Client) (ok, done bool) {
	i := int(t.next.Add(1)) - 1
	if i >= len(t.users) {
		return false, true
	}
	u := t.users[i]
	r, err := jsonRequest(ctx, t.base+"/api/auth/sign-in/email", `{"email":"`+u.email+`","password":"`+password+`"}`)
	if err != nil {
		return false, false
	}
	res, err := c.Do(r)
	if err != nil {
		return false, false
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	var challenge string
	for _, ck := range res.Cookies() {
		if ck.Name == t.cookie {
			challenge = ck.Name + "=" + ck.Value
		}
	}
	if res.StatusCode != http.StatusOK || challenge == "" {
		return false, false
	}
	code := domain.TOTPCode(u.secret, domain.TOTPStep(time.Now()), 6)
	return postJSON(ctx, c, t.origin, t.base+"/api/auth/two-factor/verify-totp", challenge, `{"code":"`+code+`"}`, nil) == nil, false
}

// signUpAs creates a user with the run's password and returns its session
// cookie as a Cookie header value.
func signUpAs(ctx context.Context, c *http.Client, base, cookieName, addr string) (string, error) {
	r, err := jsonRequest(ctx, base+"/api/auth/sign-up/email", `{"name":"Load","email":"`+addr+`","password":"`+password+`"}`)
	if err != nil {
		return "", err
	}
	res, err := c.Do(r)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("sign-up: status %d: %s", res.StatusCode, body)
	}
	for _, ck := range res.Cookies() {
		if ck.Name == cookieName && ck.Value != "" {
			return ck.Name + "=" + ck.Value, nil
		}
	}
	return "", errors.New("sign-up set no session cookie")
}

// postJSON posts body with cookie from origin and decodes a 200 answer into out (when
// not nil).
func postJSON(ctx context.Context, c *http.Client, origin, u, cookie, body string, out any) error {
	r, err := jsonRequest(ctx, u, body)
	if err != nil {
		return err
	}
	r.Header.Set("Cookie", cookie)
	// A cookie-bearing POST must come from the service's own origin (the
	// CSRF check).
	r.Header.Set("Origin", origin)
	res, err := c.Do(r)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", res.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}
