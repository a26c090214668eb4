package harness

import (
	"crypto/rand"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/net/html"
	"golang.org/x/oauth2"
)

// This file drives Gatehouse's OpenID Connect provider with strict clients
// nobody here wrote: coreos/go-oidc (discovery, ID token verification,
// userinfo) and golang.org/x/oauth2 (authorization URL with PKCE, code
// exchange, refresh). A cookie-jar "browser" walks the hosted sign-in and
// consent pages by submitting the forms the pages render, as a user would.

// StrictPassword is the password of the user the strict clients sign in.
const StrictPassword = "strict client passphrase 42"

// StrictClient is an OAuth client registered through the admin API.
type StrictClient struct {
	ID, Secret  string
	RedirectURI string
	FirstParty  bool
}

// StrictWorld is a running Gatehouse with a registered public first-party
// client, a confidential third-party client and a verified user.
type StrictWorld struct {
	App          *App
	Issuer       string
	Public       StrictClient
	Confidential StrictClient
	Email        string
	UserID       string
}

// The clients' redirect URIs. The browser stops at them, so nothing listens.
const (
	StrictPublicRedirect       = "https://spa.example.test/auth/callback"
	StrictConfidentialRedirect = "https://rp.example.test/callback"
)

// strictScopes are the scopes every flow asks for.
var strictScopes = []string{oidc.ScopeOpenID, "profile", "email", oidc.ScopeOfflineAccess}

// MustRegisterStrictClient registers a client through POST
// /api/admin/oauth-clients and returns its credentials.
func MustRegisterStrictClient(t testing.TB, admin *Client, name, typ string, firstParty bool, redirect string) StrictClient {
	t.Helper()
	r := admin.Post("/api/admin/oauth-clients", MustJSON(t, map[string]any{
		"name": name, "redirectUris": []string{redirect}, "type": typ, "firstParty": firstParty,
	}))
	MustStatus(t, r, http.StatusCreated)
	body := r.JSON(t)
	c := StrictClient{RedirectURI: redirect, FirstParty: firstParty}
	c.ID, _ = body["clientId"].(string)
	c.Secret, _ = body["clientSecret"].(string)
	if c.ID == "" {
		t.Fatalf("no clientId in %s", r.Body)
	}
	if (typ == "confidential") != (c.Secret != "") {
		t.Fatalf("%s client: clientSecret = %q; body %s", typ, c.Secret, r.Body)
	}
	return c
}

// oauthConfig is the x/oauth2 configuration of c, with the endpoints taken
// from the discovered provider. A public client sends its client_id in the
// body and no secret; a confidential one uses HTTP Basic
// (client_secret_basic, which every server must support).
func (c StrictClient) OauthConfig(p *oidc.Provider) *oauth2.Config {
	ep := p.Endpoint()
	if c.Secret == "" {
		ep.AuthStyle = oauth2.AuthStyleInParams
	} else {
		ep.AuthStyle = oauth2.AuthStyleInHeader
	}
	return &oauth2.Config{ClientID: c.ID, ClientSecret: c.Secret, Endpoint: ep, RedirectURL: c.RedirectURI, Scopes: strictScopes}
}

// StrictBrowser is a cookie-jar HTTP client that follows redirects like a
// browser but stops at a client's redirect URI, recording the paths it visited.
type StrictBrowser struct {
	t      testing.TB
	origin string
	Hc     *http.Client
	StopAt string // scheme://host/path of the redirect URI ("" follows everything)
	Seen   []string
}

func NewStrictBrowser(t testing.TB, app *App) *StrictBrowser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &StrictBrowser{t: t, origin: app.URL}
	b.Hc = &http.Client{Jar: jar, Timeout: 30 * time.Second}
	b.Hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		b.Seen = append(b.Seen, req.URL.Path)
		if len(via) >= 15 {
			return errors.New("more than 15 redirects")
		}
		if b.StopAt != "" && StrictWithoutQuery(req.URL) == b.StopAt {
			return http.ErrUseLastResponse
		}
		return nil
	}
	return b
}

// StrictWithoutQuery returns u's scheme, host and path.
func StrictWithoutQuery(u *url.URL) string {
	v := *u
	v.RawQuery, v.Fragment = "", ""
	return v.String()
}

// StrictPage is a response the browser read to the end.
type StrictPage struct {
	Status int
	URL    *url.URL // where the response came from (after redirects)
	Header http.Header
	Body   string
}

func (b *StrictBrowser) Send(req *http.Request) *StrictPage {
	b.t.Helper()
	b.Seen = append(b.Seen, req.URL.Path)
	res, err := b.Hc.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return &StrictPage{Status: res.StatusCode, URL: res.Request.URL, Header: res.Header, Body: string(body)}
}

func (b *StrictBrowser) Get(target string) *StrictPage {
	b.t.Helper()
	req, err := http.NewRequestWithContext(b.t.Context(), http.MethodGet, target, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.Send(req)
}

// submit posts form f, as the browser would on pressing its submit button
// named by submitter (nil for the form's default submission).
func (b *StrictBrowser) Submit(page *StrictPage, f StrictForm, submitter *StrictField) *StrictPage {
	b.t.Helper()
	action, err := page.URL.Parse(f.Action)
	if err != nil {
		b.t.Fatalf("form action %q: %v", f.Action, err)
	}
	if !strings.EqualFold(f.Method, http.MethodPost) {
		b.t.Fatalf("form to %s has method %q, want post", action, f.Method)
	}
	vals := url.Values{}
	for _, fl := range f.Fields {
		vals.Add(fl.Name, fl.Value)
	}
	if submitter != nil {
		vals.Add(submitter.Name, submitter.Value)
	}
	req, err := http.NewRequestWithContext(b.t.Context(), http.MethodPost, action.String(), strings.NewReader(vals.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", page.URL.Scheme+"://"+page.URL.Host) // a browser sends the page's origin
	return b.Send(req)
}

// StrictField is a named form control and the value it submits.
type StrictField struct{ Name, Value, Type string }

// StrictForm is a <form> of a page: where and how it posts, the controls it
// submits by default and its submit buttons.
type StrictForm struct {
	Action, Method string
	Fields         []StrictField // inputs, selects and textareas that submit
	Submitters     []StrictField // named submit buttons
	HasPassword    bool
}

// ParseStrictForms reads every form of an HTML page.
func ParseStrictForms(t testing.TB, body string) []StrictForm {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse HTML: %v", err)
	}
	attr := func(n *html.Node, key string) (string, bool) {
		for _, a := range n.Attr {
			if strings.EqualFold(a.Key, key) {
				return a.Val, true
			}
		}
		return "", false
	}
	var forms []StrictForm
	var walk func(n *html.Node, f *StrictForm)
	walk = func(n *html.Node, f *StrictForm) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "form":
				action, _ := attr(n, "action")
				method, _ := attr(n, "method")
				if method == "" {
					method = http.MethodGet
				}
				forms = append(forms, StrictForm{Action: action, Method: method})
				f = &forms[len(forms)-1]
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c, f)
				}
				// Forms do not nest in HTML, so f stays valid while its
				// children are walked.
				return
			case "input", "button", "textarea", "select":
				if f == nil {
					break
				}
				name, _ := attr(n, "name")
				typ, _ := attr(n, "type")
				typ = strings.ToLower(typ)
				value, _ := attr(n, "value")
				if _, disabled := attr(n, "disabled"); disabled {
					break
				}
				if typ == "password" {
					f.HasPassword = true
				}
				if name == "" {
					break
				}
				switch {
				case n.Data == "button" && (typ == "" || typ == "submit"), n.Data == "input" && (typ == "submit" || typ == "image"):
					f.Submitters = append(f.Submitters, StrictField{Name: name, Value: value, Type: "submit"})
				case n.Data == "button", typ == "button", typ == "reset", typ == "file":
				case typ == "checkbox" || typ == "radio":
					if _, checked := attr(n, "checked"); checked {
						if value == "" {
							value = "on"
						}
						f.Fields = append(f.Fields, StrictField{Name: name, Value: value, Type: typ})
					}
				case n.Data == "textarea":
					var sb strings.Builder
					for c := n.FirstChild; c != nil; c = c.NextSibling {
						if c.Type == html.TextNode {
							sb.WriteString(c.Data)
						}
					}
					f.Fields = append(f.Fields, StrictField{Name: name, Value: sb.String(), Type: "textarea"})
				case n.Data == "select":
					f.Fields = append(f.Fields, StrictField{Name: name, Value: strictSelectedOption(n), Type: "select"})
				default:
					if typ == "" {
						typ = "text"
					}
					f.Fields = append(f.Fields, StrictField{Name: name, Value: value, Type: typ})
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, f)
		}
	}
	walk(doc, nil)
	return forms
}

// strictSelectedOption returns the value of a <select>'s selected (or first) option.
func strictSelectedOption(sel *html.Node) string {
	var first, chosen *html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "option" {
			if first == nil {
				first = n
			}
			for _, a := range n.Attr {
				if a.Key == "selected" {
					chosen = n
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(sel)
	if chosen == nil {
		chosen = first
	}
	if chosen == nil {
		return ""
	}
	for _, a := range chosen.Attr {
		if a.Key == "value" {
			return a.Val
		}
	}
	if chosen.FirstChild != nil {
		return strings.TrimSpace(chosen.FirstChild.Data)
	}
	return ""
}

// set replaces the value of the field named name, failing if the form has none.
func (f *StrictForm) Set(t testing.TB, name, value string) {
	t.Helper()
	for i := range f.Fields {
		if f.Fields[i].Name == name {
			f.Fields[i].Value = value
			return
		}
	}
	t.Fatalf("form to %s has no field %q; fields %+v", f.Action, name, f.Fields)
}

// StrictSignInForm returns the page's form with a password field.
func StrictSignInForm(t testing.TB, page *StrictPage) StrictForm {
	t.Helper()
	for _, f := range ParseStrictForms(t, page.Body) {
		if f.HasPassword {
			return f
		}
	}
	t.Fatalf("no form with a password field on %s:\n%s", page.URL, page.Body)
	return StrictForm{}
}

// strictConsentForm returns the consent page's form that accepts, and the submit
// button to press (nil when the form carries accept=true itself).
func strictConsentForm(t testing.TB, page *StrictPage) (StrictForm, *StrictField) {
	t.Helper()
	for _, f := range ParseStrictForms(t, page.Body) {
		for _, s := range f.Submitters {
			if s.Name == "accept" && s.Value == "true" {
				return f, &s
			}
		}
		for _, fl := range f.Fields {
			if fl.Name == "accept" && fl.Value == "true" {
				return f, nil
			}
		}
	}
	t.Fatalf("no form submitting accept=true on %s:\n%s", page.URL, page.Body)
	return StrictForm{}, nil
}

// StrictFlow is one authorization request of the code flow.
type StrictFlow struct {
	State, Nonce, Verifier string
	AuthURL                string
}

func NewStrictFlow(conf *oauth2.Config) StrictFlow {
	f := StrictFlow{State: rand.Text(), Nonce: rand.Text(), Verifier: oauth2.GenerateVerifier()}
	f.AuthURL = conf.AuthCodeURL(f.State, oauth2.S256ChallengeOption(f.Verifier), oidc.Nonce(f.Nonce))
	return f
}

// authorize runs flow in browser b: the hosted sign-in page (when the
// browser has no session), the consent page (when the client is not
// first-party and consent is wanted), and returns the callback URL the
// provider redirected to.
func (w *StrictWorld) Authorize(t testing.TB, b *StrictBrowser, c StrictClient, flow StrictFlow, signIn, consent bool) *url.URL {
	t.Helper()
	b.StopAt = c.RedirectURI
	b.Seen = nil
	page := b.Get(flow.AuthURL)
	if signIn {
		if page.Status != http.StatusOK || page.URL.Path != "/sign-in" {
			t.Fatalf("authorize without a session ended at %d %s, want the sign-in page (visited %v):\n%s", page.Status, page.URL, b.Seen, page.Body)
		}
		StrictMustHTML(t, page)
		f := StrictSignInForm(t, page)
		f.Set(t, "email", w.Email)
		f.Set(t, "password", StrictPassword)
		page = b.Submit(page, f, nil)
	}
	if consent {
		if page.Status != http.StatusOK || page.URL.Path != "/consent" {
			t.Fatalf("a third-party client's authorization ended at %d %s, want the consent page (visited %v):\n%s", page.Status, page.URL, b.Seen, page.Body)
		}
		StrictMustHTML(t, page)
		f, s := strictConsentForm(t, page)
		page = b.Submit(page, f, s)
	} else if slices.Contains(b.Seen, "/consent") {
		t.Fatalf("first-party client %s was shown the consent page (visited %v)", c.ID, b.Seen)
	}
	if page.Status < 300 || page.Status > 399 {
		t.Fatalf("authorization ended at %d %s, not a redirect to %s (visited %v):\n%s", page.Status, page.URL, c.RedirectURI, b.Seen, page.Body)
	}
	loc, err := page.URL.Parse(page.Header.Get("Location"))
	if err != nil || StrictWithoutQuery(loc) != c.RedirectURI {
		t.Fatalf("redirected to %q, want %s", page.Header.Get("Location"), c.RedirectURI)
	}
	q := loc.Query()
	if e := q.Get("error"); e != "" {
		t.Fatalf("authorization failed: %s: %s", e, q.Get("error_description"))
	}
	if q.Get("state") != flow.State {
		t.Fatalf("callback state = %q, want %q", q.Get("state"), flow.State)
	}
	if q.Get("iss") != w.Issuer { // RFC 9207
		t.Fatalf("callback iss = %q, want %q", q.Get("iss"), w.Issuer)
	}
	if q.Get("code") == "" {
		t.Fatalf("callback %s has no code", loc)
	}
	return loc
}

// StrictMustHTML fails unless page is an HTML document.
func StrictMustHTML(t testing.TB, page *StrictPage) {
	t.Helper()
	if ct := page.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("%s: Content-Type = %q, want text/html", page.URL, ct)
	}
}

// StrictTokens are what a completed flow gives the client.
type StrictTokens struct {
	Token   *oauth2.Token
	IDToken *oidc.IDToken
	RawID   string
}

// exchangeAndVerify exchanges the callback's code with the PKCE verifier and
// verifies the ID token as go-oidc does for a relying party: signature
// against the discovered JWKS, issuer, audience, expiry; then nonce, at_hash
// and the claims of the scopes.
func (w *StrictWorld) ExchangeAndVerify(t testing.TB, p *oidc.Provider, conf *oauth2.Config, flow StrictFlow, callback *url.URL) StrictTokens {
	t.Helper()
	ctx := t.Context()
	tok, err := conf.Exchange(ctx, callback.Query().Get("code"), oauth2.VerifierOption(flow.Verifier))
	if err != nil {
		t.Fatalf("exchange the code: %v", err)
	}
	if !strings.EqualFold(tok.Type(), "Bearer") {
		t.Fatalf("token_type = %q, want Bearer", tok.TokenType)
	}
	if tok.RefreshToken == "" {
		t.Fatalf("no refresh token although offline_access was granted")
	}
	if tok.Expiry.IsZero() {
		t.Fatal("no expires_in in the token response")
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		t.Fatal("no id_token in the token response")
	}
	idt := w.MustVerifyIDToken(t, p, conf.ClientID, raw, flow.Nonce)
	if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
		t.Fatalf("at_hash: %v", err)
	}
	return StrictTokens{Token: tok, IDToken: idt, RawID: raw}
}

// mustVerifyIDToken verifies an ID token for clientID and its claims.
func (w *StrictWorld) MustVerifyIDToken(t testing.TB, p *oidc.Provider, clientID, raw, nonce string) *oidc.IDToken {
	t.Helper()
	idt, err := p.Verifier(&oidc.Config{ClientID: clientID}).Verify(t.Context(), raw)
	if err != nil {
		t.Fatalf("verify the ID token: %v", err)
	}
	if idt.Issuer != w.Issuer || idt.Subject != w.UserID {
		t.Fatalf("ID token iss = %q, sub = %q; want %q, %q", idt.Issuer, idt.Subject, w.Issuer, w.UserID)
	}
	if idt.Nonce != nonce {
		t.Fatalf("ID token nonce = %q, want %q", idt.Nonce, nonce)
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified *bool  `json:"email_verified"`
		Name          string `json:"name"`
		Azp           string `json:"azp"`
		AuthTime      int64  `json:"auth_time"`
	}
	if err := idt.Claims(&claims); err != nil {
		t.Fatal(err)
	}
	if claims.Email != w.Email || claims.EmailVerified == nil || !*claims.EmailVerified || claims.Name != "Olive Oidc" {
		t.Fatalf("ID token claims %+v, want the verified user's email and name", claims)
	}
	if claims.Azp != "" && claims.Azp != clientID {
		t.Fatalf("ID token azp = %q, want %q", claims.Azp, clientID)
	}
	if claims.AuthTime == 0 || time.Unix(claims.AuthTime, 0).After(time.Now().Add(time.Minute)) {
		t.Fatalf("ID token auth_time = %d", claims.AuthTime)
	}
	return idt
}

// mustUserInfo reads userinfo with tok through go-oidc.
func (w *StrictWorld) MustUserInfo(t testing.TB, p *oidc.Provider, tok *oauth2.Token) {
	t.Helper()
	ui, err := p.UserInfo(t.Context(), oauth2.StaticTokenSource(tok))
	if err != nil {
		t.Fatalf("userinfo: %v", err)
	}
	if ui.Subject != w.UserID || ui.Email != w.Email || !ui.EmailVerified {
		t.Fatalf("userinfo = %+v, want sub %s, email %s verified", ui, w.UserID, w.Email)
	}
}

// mustRefresh refreshes through x/oauth2 (a token source holding only the
// refresh token) and checks the rotation.
func (w *StrictWorld) MustRefresh(t testing.TB, p *oidc.Provider, conf *oauth2.Config, old *oauth2.Token) *oauth2.Token {
	t.Helper()
	tok, err := conf.TokenSource(t.Context(), &oauth2.Token{RefreshToken: old.RefreshToken, Expiry: time.Now().Add(-time.Hour)}).Token()
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if tok.AccessToken == "" || tok.AccessToken == old.AccessToken {
		t.Fatalf("refresh gave access token %q, want a new one", tok.AccessToken)
	}
	if tok.RefreshToken == "" || tok.RefreshToken == old.RefreshToken {
		t.Fatalf("refresh gave refresh token %q, want a rotated one", tok.RefreshToken)
	}
	if raw, _ := tok.Extra("id_token").(string); raw != "" {
		idt, err := p.Verifier(&oidc.Config{ClientID: conf.ClientID}).Verify(t.Context(), raw)
		if err != nil {
			t.Fatalf("verify the refreshed ID token: %v", err)
		}
		if idt.Subject != w.UserID {
			t.Fatalf("refreshed ID token sub = %q", idt.Subject)
		}
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil && idt.AccessTokenHash != "" {
			t.Fatalf("refreshed ID token at_hash: %v", err)
		}
	}
	return tok
}

// revoke posts to the revocation endpoint (RFC 7009) with c's client
// authentication: Basic for a confidential client, client_id for a public one.
func (w *StrictWorld) Revoke(t testing.TB, c StrictClient, token, hint string) {
	t.Helper()
	form := url.Values{"token": {token}, "token_type_hint": {hint}}
	r := w.clientPost(t, c, "/api/auth/oauth2/revoke", form)
	if r.Status != http.StatusOK {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
}

// introspect posts to the introspection endpoint (RFC 7662) as c and returns
// the answer.
func (w *StrictWorld) Introspect(t testing.TB, c StrictClient, token string) map[string]any {
	t.Helper()
	r := w.clientPost(t, c, "/api/auth/oauth2/introspect", url.Values{"token": {token}})
	MustStatus(t, r, http.StatusOK)
	return r.JSON(t)
}

// clientPost posts form to path with c's client authentication, no cookies.
func (w *StrictWorld) clientPost(t testing.TB, c StrictClient, path string, form url.Values) *Response {
	t.Helper()
	form = maps.Clone(form)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, w.App.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Secret != "" {
		req.SetBasicAuth(url.QueryEscape(c.ID), url.QueryEscape(c.Secret)) // RFC 6749 §2.3.1
	} else {
		form.Set("client_id", c.ID)
	}
	req.Body = io.NopCloser(strings.NewReader(form.Encode()))
	req.ContentLength = int64(len(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return OpSend(t, req)
}

// userinfo calls the userinfo endpoint with a bearer token.
func (w *StrictWorld) userinfo(t testing.TB, token string) *Response {
	t.Helper()
	return UserinfoAt(t, w.App.URL, token)
}

// mustTokenRefused fails unless the service's own verification refuses
// token: userinfo answers 401 with WWW-Authenticate: Bearer
// error="invalid_token", and introspection (as the confidential client)
// answers active: false and nothing else about it.
func (w *StrictWorld) MustTokenRefused(t testing.TB, what, token string) {
	t.Helper()
	r := w.userinfo(t, token)
	if r.Status != http.StatusUnauthorized {
		t.Errorf("%s: userinfo = %d %s, want 401", what, r.Status, r.Body)
	} else if h := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, "Bearer") || !strings.Contains(h, `error="invalid_token"`) {
		t.Errorf("%s: userinfo WWW-Authenticate = %q, want Bearer error=\"invalid_token\"", what, h)
	}
	got := w.Introspect(t, w.Confidential, token)
	if got["active"] != false || len(got) != 1 {
		t.Errorf("%s: introspection = %v, want exactly {\"active\": false}", what, got)
	}
}

// mustTokenAccepted fails unless userinfo and introspection accept token:
// the control that shows the refusals come from what was changed.
func (w *StrictWorld) MustTokenAccepted(t testing.TB, what, token string) {
	t.Helper()
	r := w.userinfo(t, token)
	if r.Status != http.StatusOK || r.JSON(t)["sub"] != w.UserID {
		t.Fatalf("%s: userinfo = %d %s, want 200 with sub %s", what, r.Status, r.Body, w.UserID)
	}
	got := w.Introspect(t, w.Confidential, token)
	if got["active"] != true || got["sub"] != w.UserID {
		t.Fatalf("%s: introspection = %v, want active for %s", what, got, w.UserID)
	}
}

// strictLiveTokens runs the confidential client's flow and returns its tokens.
func (w *StrictWorld) StrictLiveTokens(t *testing.T) (*oidc.Provider, StrictTokens) {
	t.Helper()
	provider, err := oidc.NewProvider(t.Context(), w.Issuer)
	if err != nil {
		t.Fatal(err)
	}
	conf := w.Confidential.OauthConfig(provider)
	b := NewStrictBrowser(t, w.App)
	flow := NewStrictFlow(conf)
	cb := w.Authorize(t, b, w.Confidential, flow, true, true)
	return provider, w.ExchangeAndVerify(t, provider, conf, flow, cb)
}
