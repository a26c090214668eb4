package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/descope/virtualwebauthn"

	"github.com/gatehouse/gatehouse/bootstrap"
	"github.com/gatehouse/gatehouse/test/webauthntest"
)

// passkeySignIns is the passkey sign-in of the load run, signed out and
// discoverable as a browser's "Sign in with a passkey" is:
// generate-authenticate-options, which sets the challenge cookie, then
// verify-authentication with a software authenticator's assertion, which
// starts the session; one iteration is both requests. One user holds a
// passkey per client; an iteration borrows one, so each counter goes up in
// order, as a real authenticator's does.
type passkeySignIns struct {
	base, origin string
	rp           virtualwebauthn.RelyingParty
	auth         virtualwebauthn.Authenticator
	devices      chan *virtualwebauthn.Credential
}

func newPasskeySignIns(ctx context.Context, c *http.Client, base string, cfg bootstrap.Config, o options) (*passkeySignIns, error) {
	origin := strings.TrimRight(cfg.HTTP.BaseURL, "/")
	u, err := url.Parse(origin)
	if err != nil {
		return nil, err
	}
	p := &passkeySignIns{base: base, origin: origin,
		rp:      virtualwebauthn.RelyingParty{ID: u.Hostname(), Name: bootstrap.ProductName, Origin: origin},
		auth:    virtualwebauthn.NewAuthenticator(),
		devices: make(chan *virtualwebauthn.Credential, o.signInConcurrency)}
	session, err := signUpAs(ctx, c, base, cfg.SessionCookieName(), "passkey@example.com")
	if err != nil {
		return nil, err
	}
	for range o.signInConcurrency {
		cred := webauthntest.NewEC2Credential()
		if err := p.register(ctx, c, session, &cred); err != nil {
			return nil, fmt.Errorf("register a passkey: %w", err)
		}
		p.devices <- &cred
	}
	return p, nil
}

// register runs a registration ceremony for the signed-in user of session.
func (p *passkeySignIns) register(ctx context.Context, c *http.Client, session string, cred *virtualwebauthn.Credential) error {
	body, cookies, err := p.get(ctx, c, "/api/auth/passkey/generate-register-options", session)
	if err != nil {
		return err
	}
	opts, err := virtualwebauthn.ParseAttestationOptions(string(body))
	if err != nil {
		return err
	}
	auth := p.auth
	auth.Options.UserHandle = []byte(opts.UserID)
	p.auth = auth
	att := virtualwebauthn.CreateAttestationResponse(p.rp, auth, *cred, *opts)
	return postJSON(ctx, c, p.origin, p.base+"/api/auth/passkey/verify-registration", session+"; "+cookies,
		`{"name":"load","response":`+att+`}`, nil)
}

// get sends GET path with cookie and returns the 200 answer's body and the
// cookies it set, as a Cookie header value.
func (p *passkeySignIns) get(ctx context.Context, c *http.Client, path, cookie string) ([]byte, string, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+path, nil)
	if err != nil {
		return nil, "", err
	}
	if cookie != "" {
		r.Header.Set("Cookie", cookie)
	}
	res, err := c.Do(r)
	if err != nil {
		return nil, "", err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("GET %s: status %d: %s", path, res.StatusCode, body)
	}
	var set []string
	for _, ck := range res.Cookies() {
		set = append(set, ck.Name+"="+ck.Value)
	}
	return body, strings.Join(set, "; "), nil
}

// signIn is one iteration: both requests, with a borrowed passkey.
func (p *passkeySignIns) signIn(ctx context.Context, c *http.Client) (ok, done bool) {
	var cred *virtualwebauthn.Credential
	select {
	case cred = <-p.devices:
	case <-ctx.Done():
		return false, true
	}
	defer func() { p.devices <- cred }()
	body, challenge, err := p.get(ctx, c, "/api/auth/passkey/generate-authenticate-options", "")
	if err != nil {
		return false, false
	}
	opts, err := virtualwebauthn.ParseAssertionOptions(string(body))
	if err != nil {
		return false, false
	}
	cred.Counter++
	as := virtualwebauthn.CreateAssertionResponse(p.rp, p.auth, *cred, *opts)
	var out struct {
		Session json.RawMessage `json:"session"`
	}
	err = postJSON(ctx, c, p.origin, p.base+"/api/auth/passkey/verify-authentication", challenge, `{"response":`+as+`}`, &out)
	return err == nil && len(out.Session) > 0, false
}
