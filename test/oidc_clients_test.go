package test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
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
	"github.com/go-jose/go-jose/v4"
	"golang.org/x/net/html"
	"golang.org/x/oauth2"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/signingkeys"
	"github.com/gatehouse/gatehouse/domain"
)

// This file drives Gatehouse's OpenID Connect provider with strict clients
// nobody here wrote: coreos/go-oidc (discovery, ID token verification,
// userinfo) and golang.org/x/oauth2 (authorization URL with PKCE, code
// exchange, refresh). A cookie-jar "browser" walks the hosted sign-in and
// consent pages by submitting the forms the pages render, as a user would.

// strictPassword is the password of the user the strict clients sign in.
const strictPassword = "strict client passphrase 42"

// strictClient is an OAuth client registered through the admin API.
type strictClient struct {
	ID, Secret  string
	RedirectURI string
	FirstParty  bool
}

// strictWorld is a running Gatehouse with a registered public first-party
// client, a confidential third-party client and a verified user.
type strictWorld struct {
	app          *fwApp
	issuer       string
	public       strictClient
	confidential strictClient
	email        string
	userID       string
}

// The clients' redirect URIs. The browser stops at them, so nothing listens.
const (
	strictPublicRedirect       = "https://spa.example.test/auth/callback"
	strictConfidentialRedirect = "https://rp.example.test/callback"
)

// strictScopes are the scopes every flow asks for.
var strictScopes = []string{oidc.ScopeOpenID, "profile", "email", oidc.ScopeOfflineAccess}

// mustStrictWorld registers the two clients as the platform administrator
// and creates a verified user.
func mustStrictWorld(t *testing.T, app *fwApp) *strictWorld {
	t.Helper()
	admin, _ := mustAdmin(t, app)
	w := &strictWorld{app: app, issuer: app.URL + "/api/auth", email: "olive.oidc@example.com"}
	w.public = mustRegisterStrictClient(t, admin, "Strict SPA", "public", true, strictPublicRedirect)
	w.confidential = mustRegisterStrictClient(t, admin, "Strict Web App", "confidential", false, strictConfidentialRedirect)
	_, w.userID = mustVerifiedUser(t, app, "Olive Oidc", w.email, strictPassword)
	return w
}

// mustRegisterStrictClient registers a client through POST
// /api/admin/oauth-clients and returns its credentials.
func mustRegisterStrictClient(t testing.TB, admin *fwClient, name, typ string, firstParty bool, redirect string) strictClient {
	t.Helper()
	r := admin.post("/api/admin/oauth-clients", mustJSON(t, map[string]any{
		"name": name, "redirectUris": []string{redirect}, "type": typ, "firstParty": firstParty,
	}))
	mustStatus(t, r, http.StatusCreated)
	body := r.JSON(t)
	c := strictClient{RedirectURI: redirect, FirstParty: firstParty}
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
func (c strictClient) oauthConfig(p *oidc.Provider) *oauth2.Config {
	ep := p.Endpoint()
	if c.Secret == "" {
		ep.AuthStyle = oauth2.AuthStyleInParams
	} else {
		ep.AuthStyle = oauth2.AuthStyleInHeader
	}
	return &oauth2.Config{ClientID: c.ID, ClientSecret: c.Secret, Endpoint: ep, RedirectURL: c.RedirectURI, Scopes: strictScopes}
}

// strictBrowser is a cookie-jar HTTP client that follows redirects like a
// browser but stops at a client's redirect URI, recording the paths it visited.
type strictBrowser struct {
	t      testing.TB
	origin string
	hc     *http.Client
	stopAt string // scheme://host/path of the redirect URI ("" follows everything)
	seen   []string
}

func newStrictBrowser(t testing.TB, app *fwApp) *strictBrowser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &strictBrowser{t: t, origin: app.URL}
	b.hc = &http.Client{Jar: jar, Timeout: 30 * time.Second}
	b.hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		b.seen = append(b.seen, req.URL.Path)
		if len(via) >= 15 {
			return errors.New("more than 15 redirects")
		}
		if b.stopAt != "" && strictWithoutQuery(req.URL) == b.stopAt {
			return http.ErrUseLastResponse
		}
		return nil
	}
	return b
}

// strictWithoutQuery returns u's scheme, host and path.
func strictWithoutQuery(u *url.URL) string {
	v := *u
	v.RawQuery, v.Fragment = "", ""
	return v.String()
}

// strictPage is a response the browser read to the end.
type strictPage struct {
	Status int
	URL    *url.URL // where the response came from (after redirects)
	Header http.Header
	Body   string
}

func (b *strictBrowser) send(req *http.Request) *strictPage {
	b.t.Helper()
	b.seen = append(b.seen, req.URL.Path)
	res, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return &strictPage{Status: res.StatusCode, URL: res.Request.URL, Header: res.Header, Body: string(body)}
}

func (b *strictBrowser) get(target string) *strictPage {
	b.t.Helper()
	req, err := http.NewRequestWithContext(b.t.Context(), http.MethodGet, target, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.send(req)
}

// submit posts form f, as the browser would on pressing its submit button
// named by submitter (nil for the form's default submission).
func (b *strictBrowser) submit(page *strictPage, f strictForm, submitter *strictField) *strictPage {
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
	return b.send(req)
}

// strictField is a named form control and the value it submits.
type strictField struct{ Name, Value, Type string }

// strictForm is a <form> of a page: where and how it posts, the controls it
// submits by default and its submit buttons.
type strictForm struct {
	Action, Method string
	Fields         []strictField // inputs, selects and textareas that submit
	Submitters     []strictField // named submit buttons
	HasPassword    bool
}

// parseStrictForms reads every form of an HTML page.
func parseStrictForms(t testing.TB, body string) []strictForm {
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
	var forms []strictForm
	var walk func(n *html.Node, f *strictForm)
	walk = func(n *html.Node, f *strictForm) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "form":
				action, _ := attr(n, "action")
				method, _ := attr(n, "method")
				if method == "" {
					method = http.MethodGet
				}
				forms = append(forms, strictForm{Action: action, Method: method})
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
					f.Submitters = append(f.Submitters, strictField{Name: name, Value: value, Type: "submit"})
				case n.Data == "button", typ == "button", typ == "reset", typ == "file":
				case typ == "checkbox" || typ == "radio":
					if _, checked := attr(n, "checked"); checked {
						if value == "" {
							value = "on"
						}
						f.Fields = append(f.Fields, strictField{Name: name, Value: value, Type: typ})
					}
				case n.Data == "textarea":
					var sb strings.Builder
					for c := n.FirstChild; c != nil; c = c.NextSibling {
						if c.Type == html.TextNode {
							sb.WriteString(c.Data)
						}
					}
					f.Fields = append(f.Fields, strictField{Name: name, Value: sb.String(), Type: "textarea"})
				case n.Data == "select":
					f.Fields = append(f.Fields, strictField{Name: name, Value: strictSelectedOption(n), Type: "select"})
				default:
					if typ == "" {
						typ = "text"
					}
					f.Fields = append(f.Fields, strictField{Name: name, Value: value, Type: typ})
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
func (f *strictForm) set(t testing.TB, name, value string) {
	t.Helper()
	for i := range f.Fields {
		if f.Fields[i].Name == name {
			f.Fields[i].Value = value
			return
		}
	}
	t.Fatalf("form to %s has no field %q; fields %+v", f.Action, name, f.Fields)
}

// strictSignInForm returns the page's form with a password field.
func strictSignInForm(t testing.TB, page *strictPage) strictForm {
	t.Helper()
	for _, f := range parseStrictForms(t, page.Body) {
		if f.HasPassword {
			return f
		}
	}
	t.Fatalf("no form with a password field on %s:\n%s", page.URL, page.Body)
	return strictForm{}
}

// strictConsentForm returns the consent page's form that accepts, and the submit
// button to press (nil when the form carries accept=true itself).
func strictConsentForm(t testing.TB, page *strictPage) (strictForm, *strictField) {
	t.Helper()
	for _, f := range parseStrictForms(t, page.Body) {
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
	return strictForm{}, nil
}

// strictFlow is one authorization request of the code flow.
type strictFlow struct {
	State, Nonce, Verifier string
	AuthURL                string
}

func newStrictFlow(conf *oauth2.Config) strictFlow {
	f := strictFlow{State: rand.Text(), Nonce: rand.Text(), Verifier: oauth2.GenerateVerifier()}
	f.AuthURL = conf.AuthCodeURL(f.State, oauth2.S256ChallengeOption(f.Verifier), oidc.Nonce(f.Nonce))
	return f
}

// authorize runs flow in browser b: the hosted sign-in page (when the
// browser has no session), the consent page (when the client is not
// first-party and consent is wanted), and returns the callback URL the
// provider redirected to.
func (w *strictWorld) authorize(t testing.TB, b *strictBrowser, c strictClient, flow strictFlow, signIn, consent bool) *url.URL {
	t.Helper()
	b.stopAt = c.RedirectURI
	b.seen = nil
	page := b.get(flow.AuthURL)
	if signIn {
		if page.Status != http.StatusOK || page.URL.Path != "/sign-in" {
			t.Fatalf("authorize without a session ended at %d %s, want the sign-in page (visited %v):\n%s", page.Status, page.URL, b.seen, page.Body)
		}
		strictMustHTML(t, page)
		f := strictSignInForm(t, page)
		f.set(t, "email", w.email)
		f.set(t, "password", strictPassword)
		page = b.submit(page, f, nil)
	}
	if consent {
		if page.Status != http.StatusOK || page.URL.Path != "/consent" {
			t.Fatalf("a third-party client's authorization ended at %d %s, want the consent page (visited %v):\n%s", page.Status, page.URL, b.seen, page.Body)
		}
		strictMustHTML(t, page)
		f, s := strictConsentForm(t, page)
		page = b.submit(page, f, s)
	} else if slices.Contains(b.seen, "/consent") {
		t.Fatalf("first-party client %s was shown the consent page (visited %v)", c.ID, b.seen)
	}
	if page.Status < 300 || page.Status > 399 {
		t.Fatalf("authorization ended at %d %s, not a redirect to %s (visited %v):\n%s", page.Status, page.URL, c.RedirectURI, b.seen, page.Body)
	}
	loc, err := page.URL.Parse(page.Header.Get("Location"))
	if err != nil || strictWithoutQuery(loc) != c.RedirectURI {
		t.Fatalf("redirected to %q, want %s", page.Header.Get("Location"), c.RedirectURI)
	}
	q := loc.Query()
	if e := q.Get("error"); e != "" {
		t.Fatalf("authorization failed: %s: %s", e, q.Get("error_description"))
	}
	if q.Get("state") != flow.State {
		t.Fatalf("callback state = %q, want %q", q.Get("state"), flow.State)
	}
	if q.Get("iss") != w.issuer { // RFC 9207
		t.Fatalf("callback iss = %q, want %q", q.Get("iss"), w.issuer)
	}
	if q.Get("code") == "" {
		t.Fatalf("callback %s has no code", loc)
	}
	return loc
}

// strictMustHTML fails unless page is an HTML document.
func strictMustHTML(t testing.TB, page *strictPage) {
	t.Helper()
	if ct := page.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("%s: Content-Type = %q, want text/html", page.URL, ct)
	}
}

// strictTokens are what a completed flow gives the client.
type strictTokens struct {
	Token   *oauth2.Token
	IDToken *oidc.IDToken
	RawID   string
}

// exchangeAndVerify exchanges the callback's code with the PKCE verifier and
// verifies the ID token as go-oidc does for a relying party: signature
// against the discovered JWKS, issuer, audience, expiry; then nonce, at_hash
// and the claims of the scopes.
func (w *strictWorld) exchangeAndVerify(t testing.TB, p *oidc.Provider, conf *oauth2.Config, flow strictFlow, callback *url.URL) strictTokens {
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
	idt := w.mustVerifyIDToken(t, p, conf.ClientID, raw, flow.Nonce)
	if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
		t.Fatalf("at_hash: %v", err)
	}
	return strictTokens{Token: tok, IDToken: idt, RawID: raw}
}

// mustVerifyIDToken verifies an ID token for clientID and its claims.
func (w *strictWorld) mustVerifyIDToken(t testing.TB, p *oidc.Provider, clientID, raw, nonce string) *oidc.IDToken {
	t.Helper()
	idt, err := p.Verifier(&oidc.Config{ClientID: clientID}).Verify(t.Context(), raw)
	if err != nil {
		t.Fatalf("verify the ID token: %v", err)
	}
	if idt.Issuer != w.issuer || idt.Subject != w.userID {
		t.Fatalf("ID token iss = %q, sub = %q; want %q, %q", idt.Issuer, idt.Subject, w.issuer, w.userID)
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
	if claims.Email != w.email || claims.EmailVerified == nil || !*claims.EmailVerified || claims.Name != "Olive Oidc" {
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
func (w *strictWorld) mustUserInfo(t testing.TB, p *oidc.Provider, tok *oauth2.Token) {
	t.Helper()
	ui, err := p.UserInfo(t.Context(), oauth2.StaticTokenSource(tok))
	if err != nil {
		t.Fatalf("userinfo: %v", err)
	}
	if ui.Subject != w.userID || ui.Email != w.email || !ui.EmailVerified {
		t.Fatalf("userinfo = %+v, want sub %s, email %s verified", ui, w.userID, w.email)
	}
}

// mustRefresh refreshes through x/oauth2 (a token source holding only the
// refresh token) and checks the rotation.
func (w *strictWorld) mustRefresh(t testing.TB, p *oidc.Provider, conf *oauth2.Config, old *oauth2.Token) *oauth2.Token {
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
		if idt.Subject != w.userID {
			t.Fatalf("refreshed ID token sub = %q", idt.Subject)
		}
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil && idt.AccessTokenHash != "" {
			t.Fatalf("refreshed ID token at_hash: %v", err)
		}
	}
	return tok
}

// strictRefreshFails fails unless refreshing with tok's refresh token is
// refused with invalid_grant.
func strictRefreshFails(t testing.TB, conf *oauth2.Config, tok *oauth2.Token) {
	t.Helper()
	_, err := conf.TokenSource(t.Context(), &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Hour)}).Token()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Fatalf("refresh after revocation: err = %v, want invalid_grant", err)
	}
}

// revoke posts to the revocation endpoint (RFC 7009) with c's client
// authentication: Basic for a confidential client, client_id for a public one.
func (w *strictWorld) revoke(t testing.TB, c strictClient, token, hint string) {
	t.Helper()
	form := url.Values{"token": {token}, "token_type_hint": {hint}}
	r := w.clientPost(t, c, "/api/auth/oauth2/revoke", form)
	if r.Status != http.StatusOK {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
}

// introspect posts to the introspection endpoint (RFC 7662) as c and returns
// the answer.
func (w *strictWorld) introspect(t testing.TB, c strictClient, token string) map[string]any {
	t.Helper()
	r := w.clientPost(t, c, "/api/auth/oauth2/introspect", url.Values{"token": {token}})
	mustStatus(t, r, http.StatusOK)
	return r.JSON(t)
}

// clientPost posts form to path with c's client authentication, no cookies.
func (w *strictWorld) clientPost(t testing.TB, c strictClient, path string, form url.Values) *response {
	t.Helper()
	form = maps.Clone(form)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, w.app.URL+path, nil)
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
	return opSend(t, req)
}

// userinfo calls the userinfo endpoint with a bearer token.
func (w *strictWorld) userinfo(t testing.TB, token string) *response {
	t.Helper()
	return userinfoAt(t, w.app.URL, token)
}

// mustTokenRefused fails unless the service's own verification refuses
// token: userinfo answers 401 with WWW-Authenticate: Bearer
// error="invalid_token", and introspection (as the confidential client)
// answers active: false and nothing else about it.
func (w *strictWorld) mustTokenRefused(t testing.TB, what, token string) {
	t.Helper()
	r := w.userinfo(t, token)
	if r.Status != http.StatusUnauthorized {
		t.Errorf("%s: userinfo = %d %s, want 401", what, r.Status, r.Body)
	} else if h := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, "Bearer") || !strings.Contains(h, `error="invalid_token"`) {
		t.Errorf("%s: userinfo WWW-Authenticate = %q, want Bearer error=\"invalid_token\"", what, h)
	}
	got := w.introspect(t, w.confidential, token)
	if got["active"] != false || len(got) != 1 {
		t.Errorf("%s: introspection = %v, want exactly {\"active\": false}", what, got)
	}
}

// mustTokenAccepted fails unless userinfo and introspection accept token:
// the control that shows the refusals come from what was changed.
func (w *strictWorld) mustTokenAccepted(t testing.TB, what, token string) {
	t.Helper()
	r := w.userinfo(t, token)
	if r.Status != http.StatusOK || r.JSON(t)["sub"] != w.userID {
		t.Fatalf("%s: userinfo = %d %s, want 200 with sub %s", what, r.Status, r.Body, w.userID)
	}
	got := w.introspect(t, w.confidential, token)
	if got["active"] != true || got["sub"] != w.userID {
		t.Fatalf("%s: introspection = %v, want active for %s", what, got, w.userID)
	}
}

// Ensure go-oidc and x/oauth2 complete the authorization code flow with
// PKCE against Gatehouse on every store: discovery from the issuer, the
// hosted sign-in page (and, for a third-party client, the consent page)
// walked by a cookie-jar browser, the code exchange, ID token verification
// (signature by a discovered key, iss, aud, exp, nonce, at_hash, email),
// userinfo, refresh with rotation, and revocation after which userinfo and
// refresh fail.
func TestOIDCClients_go_oidc_completes_the_code_flow(t *testing.T) {
	fwForStores(t, storesOnce, adminEnv, func(t *testing.T, app *fwApp) {
		w := mustStrictWorld(t, app)
		provider, err := oidc.NewProvider(t.Context(), w.issuer)
		if err != nil {
			t.Fatalf("discovery from %s: %v", w.issuer, err)
		}
		if provider.Endpoint().AuthURL != w.issuer+"/oauth2/authorize" || provider.Endpoint().TokenURL != w.issuer+"/oauth2/token" ||
			provider.UserInfoEndpoint() != w.issuer+"/oauth2/userinfo" {
			t.Fatalf("discovered endpoints %+v, userinfo %s", provider.Endpoint(), provider.UserInfoEndpoint())
		}

		t.Run("public first-party client", func(t *testing.T) {
			conf := w.public.oauthConfig(provider)
			b := newStrictBrowser(t, app)
			flow := newStrictFlow(conf)
			cb := w.authorize(t, b, w.public, flow, true, false)
			toks := w.exchangeAndVerify(t, provider, conf, flow, cb)
			w.mustUserInfo(t, provider, toks.Token)
			next := w.mustRefresh(t, provider, conf, toks.Token)
			w.mustUserInfo(t, provider, next)

			// The browser keeps its session: a second authorization signs in
			// without the page.
			flow2 := newStrictFlow(conf)
			cb2 := w.authorize(t, b, w.public, flow2, false, false)
			toks2 := w.exchangeAndVerify(t, provider, conf, flow2, cb2)

			w.revoke(t, w.public, next.RefreshToken, "refresh_token")
			if _, err := provider.UserInfo(t.Context(), oauth2.StaticTokenSource(next)); err == nil {
				t.Fatal("userinfo accepted an access token of a revoked grant")
			}
			strictRefreshFails(t, conf, next)
			// The other grant lives on.
			w.mustUserInfo(t, provider, toks2.Token)
		})

		t.Run("confidential third-party client", func(t *testing.T) {
			conf := w.confidential.oauthConfig(provider)
			b := newStrictBrowser(t, app)
			flow := newStrictFlow(conf)
			cb := w.authorize(t, b, w.confidential, flow, true, true)
			toks := w.exchangeAndVerify(t, provider, conf, flow, cb)
			w.mustUserInfo(t, provider, toks.Token)
			if got := w.introspect(t, w.confidential, toks.Token.AccessToken); got["active"] != true || got["client_id"] != w.confidential.ID {
				t.Fatalf("introspection of a live access token = %v", got)
			}
			next := w.mustRefresh(t, provider, conf, toks.Token)
			w.mustUserInfo(t, provider, next)

			// Consent is remembered: the next authorization skips the page.
			flow2 := newStrictFlow(conf)
			cb2 := w.authorize(t, b, w.confidential, flow2, false, false)
			w.exchangeAndVerify(t, provider, conf, flow2, cb2)

			// Revoking the access token (RFC 7009) ends its use at userinfo;
			// revoking the refresh token ends the grant.
			w.revoke(t, w.confidential, next.AccessToken, "access_token")
			if _, err := provider.UserInfo(t.Context(), oauth2.StaticTokenSource(next)); err == nil {
				t.Fatal("userinfo accepted a revoked access token")
			}
			w.revoke(t, w.confidential, next.RefreshToken, "refresh_token")
			strictRefreshFails(t, conf, next)
			if got := w.introspect(t, w.confidential, next.AccessToken); got["active"] != false {
				t.Fatalf("introspection of a revoked access token = %v", got)
			}
		})
	})
}

// Ensure strict clients refuse an issuer that differs from the provider's by
// a trailing slash (OpenID Connect Discovery §4.3): go-oidc's discovery fails.
func TestOIDCClients_go_oidc_refuses_an_issuer_with_a_trailing_slash(t *testing.T) {
	app := mustStartFramework(t, storeMemory, adminEnv)
	issuer := app.URL + "/api/auth"
	if _, err := oidc.NewProvider(t.Context(), issuer); err != nil {
		t.Fatalf("control: discovery from %s: %v", issuer, err)
	}
	_, err := oidc.NewProvider(t.Context(), issuer+"/")
	if err == nil || !strings.Contains(err.Error(), "did not match") {
		t.Fatalf("discovery from %s/: err = %v, want the issuer mismatch", issuer, err)
	}
}

// Ensure a redirect_uri that differs from the registered one by one
// character is refused with an error page: no redirect, no code, even for
// a signed-in user (RFC 6749 §4.1.2.1, exact matching).
func TestOIDCClients_redirect_uri_one_character_off_is_refused(t *testing.T) {
	fwForStores(t, storesOnce, adminEnv, func(t *testing.T, app *fwApp) {
		w := mustStrictWorld(t, app)
		provider, err := oidc.NewProvider(t.Context(), w.issuer)
		if err != nil {
			t.Fatal(err)
		}
		conf := w.confidential.oauthConfig(provider)
		b := newStrictBrowser(t, app)
		flow := newStrictFlow(conf)
		w.authorize(t, b, w.confidential, flow, true, true) // control: signed in, consent stored

		for _, bad := range []string{
			"https://rp.example.test/callback/",     // an extra slash
			"https://rp.example.test/callbacK",      // a changed letter
			"https://rp.example.test:8443/callback", // another port
			"https://rp.example.test/callback?x=1",  // an added query
			"http://rp.example.test/callback",       // another scheme
			"https://rp.example.test/callback#",     // an empty fragment
			"https://rp.example.test.evil/callback", // another host
			"https://rp.example.test/callback%2F",   // an encoded slash
			"https://rp.example.test//callback",     // a doubled slash
			"https://RP.example.test/callback",      // another case
			"https://rp.example.test/./callback",    // a dot segment
			"https://rp.example.test/callback?",     // an empty query
			"https://rp.example.test/callback ",     // a trailing space
			"https://user@rp.example.test/callback", // user info
		} {
			c := *conf
			c.RedirectURL = bad
			f := newStrictFlow(&c)
			b.stopAt = ""
			hc := *b.hc
			hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, f.AuthURL, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := hc.Do(req)
			if err != nil {
				t.Fatalf("%q: %v", bad, err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusBadRequest || res.Header.Get("Location") != "" {
				t.Errorf("redirect_uri %q: %d Location %q, want a 400 error page without a redirect", bad, res.StatusCode, res.Header.Get("Location"))
				continue
			}
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
				t.Errorf("redirect_uri %q: Content-Type %q, want an HTML error page", bad, ct)
			}
			if strings.Contains(strings.ToLower(string(body)), "http-equiv=\"refresh\"") {
				t.Errorf("redirect_uri %q: the error page leads to the client:\n%s", bad, body)
			}
		}
	})
}

// --- Forged and misused tokens -------------------------------------------

// strictJWTPart encodes a JWT header or claims object.
func strictJWTPart(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// strictJWTParts decodes a JWT's claims without verifying it.
func strictJWTParts(t testing.TB, token string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("%q is not a compact JWS", token)
	}
	for i, dst := range []*map[string]any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatalf("JWT part %d: %v", i, err)
		}
		mustUnmarshal(t, b, dst)
	}
	return header, claims
}

// strictSignJWT signs claims with key (a *rsa.PrivateKey, crypto.Signer, or
// []byte for HMAC) as alg, with the headers kid and typ.
func strictSignJWT(t testing.TB, alg jose.SignatureAlgorithm, key any, kid, typ string, claims map[string]any) string {
	t.Helper()
	opts := &jose.SignerOptions{}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// strictWithClaims returns a copy of claims with changes applied (nil deletes).
func strictWithClaims(claims map[string]any, changes map[string]any) map[string]any {
	out := maps.Clone(claims)
	for k, v := range changes {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// strictLiveTokens runs the confidential client's flow and returns its tokens.
func (w *strictWorld) strictLiveTokens(t *testing.T) (*oidc.Provider, strictTokens) {
	t.Helper()
	provider, err := oidc.NewProvider(t.Context(), w.issuer)
	if err != nil {
		t.Fatal(err)
	}
	conf := w.confidential.oauthConfig(provider)
	b := newStrictBrowser(t, w.app)
	flow := newStrictFlow(conf)
	cb := w.authorize(t, b, w.confidential, flow, true, true)
	return provider, w.exchangeAndVerify(t, provider, conf, flow, cb)
}

// Ensure the service's own verification (userinfo and introspection) refuses
// tokens a strict resource server must refuse: alg "none", a token signed by
// a key that is not the service's (an unknown kid, or the service's kid with
// another key), an HMAC token keyed with the service's public key, and an ID
// token presented as an access token. Tokens with valid signatures but bad
// claims are in TestOIDCClients_service_refuses_bad_claims_signed_by_its_key.
func TestOIDCClients_service_refuses_forged_tokens(t *testing.T) {
	fwForStores(t, storesOnce, adminEnv, func(t *testing.T, app *fwApp) {
		w := mustStrictWorld(t, app)
		_, toks := w.strictLiveTokens(t)
		access := toks.Token.AccessToken
		w.mustTokenAccepted(t, "the issued access token", access)

		header, claims := strictJWTParts(t, access)
		if header["typ"] != "at+jwt" || header["alg"] != "RS256" {
			t.Fatalf("access token header %v, want alg RS256, typ at+jwt (RFC 9068)", header)
		}
		kid, _ := header["kid"].(string)
		payload := strictJWTPart(t, claims)

		noneHeaders := []map[string]any{
			{"alg": "none", "typ": "at+jwt"},
			{"alg": "none", "typ": "at+jwt", "kid": kid},
			{"alg": "None", "typ": "at+jwt", "kid": kid},
		}
		for _, h := range noneHeaders {
			w.mustTokenRefused(t, "alg "+h["alg"].(string), strictJWTPart(t, h)+"."+payload+".")
		}
		// The real signature under a header naming alg none.
		sig := access[strings.LastIndex(access, ".")+1:]
		w.mustTokenRefused(t, "alg none with the real signature", strictJWTPart(t, noneHeaders[1])+"."+payload+"."+sig)

		stranger, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		w.mustTokenRefused(t, "an unknown kid", strictSignJWT(t, jose.RS256, stranger, rand.Text(), "at+jwt", claims))
		w.mustTokenRefused(t, "no kid", strictSignJWT(t, jose.RS256, stranger, "", "at+jwt", claims))
		w.mustTokenRefused(t, "the service's kid, another key", strictSignJWT(t, jose.RS256, stranger, kid, "at+jwt", claims))

		// HS256 keyed with the published key's JSON (algorithm confusion).
		var jwks struct{ Keys []json.RawMessage }
		mustUnmarshal(t, strictGetBody(t, app, "/api/auth/jwks"), &jwks)
		for _, k := range jwks.Keys {
			w.mustTokenRefused(t, "HS256 keyed with a published key", strictSignJWT(t, jose.HS256, []byte(k), kid, "at+jwt", claims))
		}

		// A tampered payload under the real signature.
		tampered := strictWithClaims(claims, map[string]any{"scope": "openid profile email offline_access admin"})
		w.mustTokenRefused(t, "a tampered payload", access[:strings.Index(access, ".")]+"."+strictJWTPart(t, tampered)+"."+sig)

		// The ID token is not an access token: typ JWT, aud the client.
		w.mustTokenRefused(t, "the ID token as an access token", toks.RawID)

		// Control: the untouched access token is still good.
		w.mustTokenAccepted(t, "the issued access token after the forgeries", access)
	})
}

// strictGetBody GETs path without cookies and returns the body of a 200.
func strictGetBody(t testing.TB, app *fwApp, path string) []byte {
	t.Helper()
	r := app.client(t).get(path)
	mustStatus(t, r, http.StatusOK)
	return r.Body
}

// strictSigner returns the service's signing RS256 key, read from the
// store and opened with the service secret, as an operator holding both
// could.
func strictSigner(t *testing.T, app *fwApp) (kid string, key *rsa.PrivateKey) {
	t.Helper()
	keys, err := gormstore.NewSigningKeyRepository(mustDB(t, app)).List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var current *domain.SigningKey
	for i := range keys { // oldest first: the last unretired one signs
		if keys[i].Alg == domain.AlgRS256 && keys[i].RetiredAt.IsZero() {
			current = &keys[i]
		}
	}
	if current == nil {
		t.Fatalf("no signing RS256 key among %d stored keys", len(keys))
	}
	priv, err := signingkeys.PrivateKey(signingkeys.Secrets{testSecret}, *current)
	if err != nil {
		t.Fatalf("open key %s with the service secret: %v", current.ID, err)
	}
	rsaKey, ok := priv.(*rsa.PrivateKey)
	if !ok {
		t.Fatalf("key %s opens to %T, want *rsa.PrivateKey", current.ID, priv)
	}
	return string(current.ID), rsaKey
}

// Ensure the service's own verification refuses tokens signed by its own
// current key (opened from the store with the service secret) whose claims
// are wrong: expired, not yet valid (iat or nbf in the future), another
// audience, another issuer, an ID token's type, no type. A control token
// re-signed with the same key and the issued claims is accepted.
func TestOIDCClients_service_refuses_bad_claims_signed_by_its_key(t *testing.T) {
	fwForStores(t, storesOnce, adminEnv, func(t *testing.T, app *fwApp) {
		w := mustStrictWorld(t, app)
		_, toks := w.strictLiveTokens(t)
		header, claims := strictJWTParts(t, toks.Token.AccessToken)
		kid, key := strictSigner(t, app)
		if header["kid"] != kid {
			t.Fatalf("the access token's kid %v is not the stored signing key %s", header["kid"], kid)
		}
		sign := func(changes map[string]any) string {
			return strictSignJWT(t, jose.RS256, key, kid, "at+jwt", strictWithClaims(claims, changes))
		}
		now := time.Now()
		w.mustTokenAccepted(t, "control: the issued claims re-signed", sign(map[string]any{"jti": rand.Text()}))

		w.mustTokenRefused(t, "expired", sign(map[string]any{"iat": now.Add(-2 * time.Hour).Unix(), "exp": now.Add(-time.Hour).Unix()}))
		w.mustTokenRefused(t, "no exp", sign(map[string]any{"exp": nil}))
		w.mustTokenRefused(t, "nbf in the future", sign(map[string]any{"nbf": now.Add(time.Hour).Unix(), "exp": now.Add(2 * time.Hour).Unix()}))
		w.mustTokenRefused(t, "iat in the future", sign(map[string]any{"iat": now.Add(time.Hour).Unix(), "exp": now.Add(2 * time.Hour).Unix()}))
		w.mustTokenRefused(t, "another audience", sign(map[string]any{"aud": "https://api.other.example"}))
		w.mustTokenRefused(t, "another audience in a list", sign(map[string]any{"aud": []string{"https://api.other.example"}}))
		w.mustTokenRefused(t, "the client as audience", sign(map[string]any{"aud": w.confidential.ID}))
		w.mustTokenRefused(t, "another issuer", sign(map[string]any{"iss": w.issuer + "/"}))
		w.mustTokenRefused(t, "an unknown grant", sign(map[string]any{"gid": "grant-that-never-was"}))
		w.mustTokenRefused(t, "typ JWT", strictSignJWT(t, jose.RS256, key, kid, "JWT", claims))
		w.mustTokenRefused(t, "no typ", strictSignJWT(t, jose.RS256, key, kid, "", claims))
	})
}
