package pages

import (
	"bytes"
	"context"
	"embed"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/domain"
)

// The hosted pages: the home page, sign-in, sign-up, forgotten and reset
// password, consent, sign-out and the second factor, rendered on the server with html/template. They work
// without JavaScript and load nothing from elsewhere; the one script, the
// sign-in page's passkey button (passkey.js, and the shell's webauthn.js
// before it), is served from here; their forms post to the
// framework routes, which answer a form post with 303 See Other
// (formRedirect). Like the explorer they are pages, not API operations, so
// no contract lists them.

//go:embed templates/*.html assets/*
var pageFiles embed.FS

const stylesheetPath = "/assets/gatehouse.css"

// passkeyScriptPath is the sign-in page's own script: the passkey button.
const passkeyScriptPath = "/assets/passkey.js"

// scriptedPages may run their own scripts (script-src 'self') and call the
// framework (connect-src 'self'); the others run none.
var scriptedPages = map[string]bool{"sign-in": true}

// pagesCSP is the pages' policy: their own stylesheet, no script (the
// scriptedPages add their own scripts and calls to this origin), and
// forms that post here only. Pages serving an authorization or logout
// request add the client's redirect origin to form-action, since browsers
// apply form-action to the redirects that follow a form post.
const pagesCSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'%s; frame-ancestors 'none'; base-uri 'none'"

// pageData is what a page template renders.
type pageData struct {
	Title      string
	Stylesheet string
	// PasskeyScript is the passkey button's script URL (sign-in).
	PasskeyScript string
	// WebAuthn is the URL of the shell's helpers it needs, loaded first.
	WebAuthn string
	Notice   string
	Error    string
	ShowForm bool

	CallbackURL                     string
	SignInURL, SignUpURL, ForgotURL string
	RedirectTo                      string // forgot-password: where the link leads
	Sent                            bool   // forgot-password: the mail went out
	Token                           string // reset-password

	ClientName string   // consent, sign-out
	UserEmail  string   // consent
	Scopes     []string // consent: what each scope allows, in words
	OAuthQuery string   // consent: the authorization request
	Hidden     []hiddenField
	Done       bool // sign-out: signed out (the notice says so)

	AccountURL string // sign-in: where a signed-in visitor may continue
	// Providers are the identity providers the sign-in page offers.
	Providers []providerButton
	// ProviderError is where a provider's error goes back to (sign-in).
	ProviderError string
	// ProviderCallback is where a provider's sign-in ends (sign-in): the
	// page's callbackURL, or the account page, as the password form's.
	ProviderCallback string
	Version          string // home
	Issuer           string // home: the OpenID issuer, as discovery names it
	SignedIn         bool   // home
	StepUp           bool   // two-factor: a signed-in session proves its second factor
	OTPSent          bool   // two-factor: a code was mailed
}

type hiddenField struct{ Name, Value string }

// providerButton is one identity provider on the sign-in page.
type providerButton struct{ ID, Name string }

// pages renders the hosted pages: their own layout and look (templates/,
// assets/), with the shell's assets and headers.
type pages struct {
	templates map[string]*template.Template
	css       *shell.Asset
	passkey   *shell.Asset
}

func newPages() *pages {
	p := &pages{templates: map[string]*template.Template{},
		css:     shell.NewAsset(pageFiles, "assets/gatehouse.css", stylesheetPath, shell.CSS),
		passkey: shell.NewAsset(pageFiles, "assets/passkey.js", passkeyScriptPath, shell.JavaScript)}
	for _, name := range []string{"home", "sign-in", "sign-up", "forgot-password", "reset-password", "consent", "sign-out", "two-factor"} {
		p.templates[name] = template.Must(template.ParseFS(pageFiles, "templates/layout.html", "templates/"+name+".html"))
	}
	return p
}

// scopeDescriptions say in words what an OpenID scope lets a client see.
var scopeDescriptions = map[string]string{
	"openid":         "Know who you are: your account's identifier at Gatehouse",
	"profile":        "See your name and profile picture",
	"email":          "See your e-mail address and whether it is confirmed",
	"offline_access": "Keep access while you are away, without asking you again",
}

// errorMessages turn the codes a form post comes back with into words.
var errorMessages = map[string]string{ // #nosec G101 -- error codes and their messages, no credentials
	"INVALID_EMAIL_OR_PASSWORD":             "The e-mail address or the password is wrong. After several failed attempts the account is locked for a while.",
	"EMAIL_NOT_VERIFIED":                    "Confirm your e-mail address first: open the link we mailed you.",
	"BANNED_USER":                           "This account is suspended.",
	"account_not_linked":                    "An account with this e-mail address exists already. Sign in with it, then link this provider from your account.",
	"email_not_found":                       "The provider did not share an e-mail address.",
	"email_not_verified":                    "Confirm your e-mail address first: open the link we mailed you.",
	"banned":                                "This account is suspended.",
	"state_mismatch":                        "The sign-in took too long or was started elsewhere. Try again.",
	"access_denied":                         "The sign-in was cancelled at the provider.",
	"unable_to_get_user_info":               "The provider's answer could not be checked. Try again.",
	"invalid_code":                          "The provider's answer could not be checked. Try again.",
	"issuer_mismatch":                       "The provider's answer could not be checked. Try again.",
	"issuer_missing":                        "The provider's answer could not be checked. Try again.",
	"TOO_MANY_REQUESTS":                     "Too many attempts. Wait a minute, then try again.",
	"USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL": "An account with this e-mail address exists already. Sign in instead.",
	"PASSWORD_TOO_SHORT":                    "The password is too short: use at least 8 characters.",
	"PASSWORD_TOO_LONG":                     "The password is too long: use at most 128 characters.",
	"PASSWORD_TOO_COMMON":                   "This password is too common. Choose another.",
	"INVALID_PASSWORD":                      "This password cannot be used. Choose another.",
	"INVALID_EMAIL":                         "Enter a valid e-mail address.",
	"INVALID_TOKEN":                         "This link is not valid any more: it was used, has expired or is incomplete. Ask for a new one.",
	"TOKEN_EXPIRED":                         "This link has expired. Ask for a new one.",
	"INVALID_CALLBACK_URL":                  "The application that sent you here gave an address Gatehouse does not trust.",
	"INVALID_REDIRECT_URL":                  "The application that sent you here gave an address Gatehouse does not trust.",
	"UNAUTHORIZED":                          "Your session has ended. Sign in again.",
	"VALIDATION_ERROR":                      "Some fields are missing or not valid. Check them and try again.",
	"INVALID_REQUEST":                       "This request is not valid. Go back to the application and try again.",
	"IMPERSONATION_READ_ONLY":               "You are impersonating this user: you may look, but not act as them. Nothing was changed.",
	// The second-factor page: a wrong answer says no more than that.
	"INVALID_CODE":                       "That code is not right, or was used already. Try again.",
	"INVALID_BACKUP_CODE":                "That backup code is not right, or was used already. Try again.",
	"OTP_HAS_EXPIRED":                    "That code has expired, or none was sent. Ask for a new one.",
	"TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE": "Too many wrong codes. Sign in again.",
	"INVALID_TWO_FACTOR_COOKIE":          "Your sign-in has expired. Sign in again.",
	"ACCOUNT_TEMPORARILY_LOCKED":         "Too many failed attempts: the account is locked for a while. Try again later.",
	"TOTP_NOT_ENABLED":                   "This account has no authenticator app. Use another way below.",
	"TWO_FACTOR_NOT_ENABLED":             "This account has no second factor.",
}

func errorMessage(code string) string {
	if code == "" {
		return ""
	}
	if m, ok := errorMessages[code]; ok {
		return m
	}
	return "Something went wrong. Try again."
}

var noticeMessages = map[string]string{
	"check-email":    "Account created. We mailed you a link: open it to confirm your address, then sign in.",
	"password-reset": "Your password has been changed. Sign in with the new one.",
	"otp-sent":       "We mailed you a code. It works for 3 minutes.",
}

func (s *API) AddHostedPages() {
	p := newPages()
	p.css.Route(s.Kit)
	p.passkey.Route(s.Kit)
	// Browsers ask for an icon on every page; an empty answer keeps that
	// request from showing as an error, and costs nothing.
	s.Handle(http.MethodGet, "/favicon.ico", edge.Policy{Rate: edge.RatePublic}, func(c *gin.Context) {
		c.Header("Cache-Control", "public, max-age=86400")
		c.Status(http.StatusNoContent)
	})
	// The pages that show who is signed in read the session cookie; every
	// page is a GET, so the origin check guards the routes they post to.
	page := edge.Policy{Rate: edge.RateGeneral}
	signedIn := edge.Policy{Rate: edge.RateGeneral, Security: edge.SecuritySession}
	home := func(c *gin.Context) { s.homePage(c, p) }
	s.Handle(http.MethodGet, "/", signedIn, home)
	s.Handle(http.MethodHead, "/", signedIn, home)
	s.Page("/sign-in", signedIn, func(c *gin.Context) { s.signInPage(c, p) })
	s.Page("/sign-up", page, func(c *gin.Context) { s.signUpPage(c, p) })
	s.Page("/forgot-password", page, func(c *gin.Context) { s.forgotPasswordPage(c, p) })
	s.Page("/reset-password", page, func(c *gin.Context) { s.resetPasswordPage(c, p) })
	s.Page("/consent", signedIn, func(c *gin.Context) { s.consentPage(c, p) })
	s.Page("/sign-out", signedIn, func(c *gin.Context) { s.signOutPage(c, p) })
	s.Page(edge.TwoFactorPath, signedIn, func(c *gin.Context) { s.twoFactorPage(c, p) })
}

// render writes a page with its CSP; formOrigins are origins the page's
// form may lead to besides this one.
func (s *API) render(c *gin.Context, p *pages, status int, name string, d pageData, formOrigins ...string) {
	d.Stylesheet, d.PasskeyScript, d.WebAuthn = p.css.URL(), p.passkey.URL(), shell.WebAuthnScript().URL()
	var buf bytes.Buffer
	if err := p.templates[name].ExecuteTemplate(&buf, "layout", d); err != nil {
		edge.LoggerFrom(c.Request.Context()).ErrorContext(c.Request.Context(), "page", "page", name, "error", err.Error())
		c.Status(http.StatusInternalServerError)
		return
	}
	extra := ""
	for _, o := range formOrigins {
		if o = cspOrigin(o); o != "" && o != strings.ToLower(s.Config.BaseURL) && !strings.Contains(extra, " "+o) {
			extra += " " + o
		}
	}
	h := c.Writer.Header()
	csp := strings.Replace(pagesCSP, "%s", extra, 1)
	if scriptedPages[name] {
		csp += "; script-src 'self'; connect-src 'self'"
	}
	shell.SetHeaders(h, csp)
	if status == http.StatusServiceUnavailable {
		h.Set("Retry-After", edge.RetrySeconds(edge.UnavailableRetryAfter))
	}
	c.Data(status, "text/html; charset=utf-8", edge.NeutralizeBidi(buf.Bytes()))
}

// cspOrigin returns origin as a CSP source (scheme://host[:port], or
// "scheme:" for a native app's private-use scheme such as com.example.app:),
// or "" when it is neither.
func cspOrigin(origin string) string {
	if scheme, ok := strings.CutSuffix(origin, ":"); ok && privateUseScheme(scheme) {
		return origin
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return ""
	}
	for _, r := range u.Host {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".-:[]", r)) {
			return ""
		}
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// withCallback is path with callbackURL in its query, when there is one.
func withCallback(path, callbackURL string) string {
	return edge.PageURL(path, url.Values{"callbackURL": {callbackURL}})
}

// callbackOrigins are the origins a sign-in or sign-up with callbackURL
// may end on: the callback's own origin, and for an authorization request
// the client's redirect origin.
func (s *API) callbackOrigins(c *gin.Context, callbackURL string) []string {
	if callbackURL == "" {
		return nil
	}
	u, err := url.Parse(callbackURL)
	if err != nil {
		return nil
	}
	if u.Host != "" {
		return []string{u.Scheme + "://" + u.Host}
	}
	if u.Path != edge.FrameworkBase+"/oauth2/authorize" {
		return nil
	}
	prompt, err := s.oauthProvider.DescribeAuthorization(c.Request.Context(), u.Query())
	if err != nil {
		return nil
	}
	return []string{prompt.RedirectOrigin}
}

// pageCallback reads and checks a page's callbackURL: "" and ok when there
// is none; not ok (the page answers 400) when it is not a safe target.
func (s *API) pageCallback(c *gin.Context) (string, bool) {
	cb := c.Query("callbackURL")
	return cb, cb == "" || s.Origins.SafeTarget(cb)
}

func (s *API) signInPage(c *gin.Context, p *pages) {
	cb, ok := s.pageCallback(c)
	d := pageData{Title: "Sign in", ShowForm: ok, Error: errorMessage(c.Query("error")), Notice: noticeMessages[c.Query("notice")]}
	if !ok {
		d.Error = errorMessage("INVALID_CALLBACK_URL")
		s.render(c, p, http.StatusBadRequest, "sign-in", d)
		return
	}
	d.signInLinks(cb)
	origins := s.callbackOrigins(c, cb)
	d.Providers, origins = s.providerButtons(c.Request.Context(), origins)
	if cb == "" {
		// Signed in already: offer the account instead of a dead end. With
		// a callback (an application asking to sign in again) the form is
		// what the visitor came for.
		if u := s.signedInUser(c); u != nil {
			d.Notice, d.AccountURL = "You are signed in as "+string(u.Email())+".", edge.AccountPath
		}
	}
	s.render(c, p, http.StatusOK, "sign-in", d, origins...)
}

// signInLinks sets the sign-in page's links for callbackURL cb: its form,
// the pages it links to and its provider buttons all end there.
func (d *pageData) signInLinks(cb string) {
	d.CallbackURL, d.SignUpURL, d.ForgotURL = cb, withCallback("/sign-up", cb), withCallback("/forgot-password", cb)
	d.ProviderError, d.ProviderCallback = withCallback("/sign-in", cb), cb
	if cb == "" {
		// sign-in/social's own default is "/" (Better Auth's); the page's
		// buttons end where its password form does.
		d.ProviderCallback = edge.AccountPath
	}
}

// providerButtons are the sign-in page's buttons, one per enabled identity
// provider, and origins with each one's authorization endpoint added. When
// the providers cannot be read, the error is logged and the page has no
// buttons.
func (s *API) providerButtons(ctx context.Context, origins []string) ([]providerButton, []string) {
	ps, err := s.providers.Enabled(ctx)
	if err != nil {
		s.Logger.ErrorContext(ctx, "sign-in page: identity providers", "err", err)
		return nil, origins
	}
	var buttons []providerButton
	for _, pr := range ps {
		buttons = append(buttons, providerButton{ID: string(pr.ID), Name: pr.Name})
		// The button's form ends at the provider: form-action must
		// allow its origin (browsers check it on redirects too).
		if ep := s.signIns.AuthorizationEndpoint(ctx, pr); ep != "" {
			origins = append(origins, ep)
		}
	}
	return buttons, origins
}

func (s *API) signUpPage(c *gin.Context, p *pages) {
	cb, ok := s.pageCallback(c)
	d := pageData{Title: "Create an account", ShowForm: ok, Error: errorMessage(c.Query("error"))}
	if !ok {
		d.Error = errorMessage("INVALID_CALLBACK_URL")
		s.render(c, p, http.StatusBadRequest, "sign-up", d)
		return
	}
	d.CallbackURL, d.SignInURL = cb, withCallback("/sign-in", cb)
	s.render(c, p, http.StatusOK, "sign-up", d, s.callbackOrigins(c, cb)...)
}

func (s *API) forgotPasswordPage(c *gin.Context, p *pages) {
	cb, ok := s.pageCallback(c)
	if !ok {
		cb = ""
	}
	d := pageData{Title: "Forgot your password?", Error: errorMessage(c.Query("error")), SignInURL: withCallback("/sign-in", cb),
		RedirectTo: s.Config.BaseURL + "/reset-password", Sent: c.Query("sent") != ""}
	if d.Sent {
		d.Notice = "If an account exists for that address, we have mailed it a link to choose a new password."
	}
	s.render(c, p, http.StatusOK, "forgot-password", d)
}

func (s *API) resetPasswordPage(c *gin.Context, p *pages) {
	d := pageData{Title: "Choose a new password", Token: c.Query("token"), Error: errorMessage(c.Query("error"))}
	status := http.StatusOK
	if d.Token == "" {
		status = http.StatusBadRequest
		if d.Error == "" {
			d.Error = errorMessage("INVALID_TOKEN")
		}
	}
	s.render(c, p, status, "reset-password", d)
}

// consentPage asks the signed-in user whether a client may have the scopes
// it requests. Its query is the authorization request; the form posts it
// back as oauth_query with the answer.
func (s *API) consentPage(c *gin.Context, p *pages) {
	ctx := c.Request.Context()
	q, code, oauthQuery := consentQuery(c.Request.URL)
	sess, err := s.Session(ctx)
	if err != nil {
		if !edge.IsUnauthenticated(err) {
			s.render(c, p, edge.StatusOfErr(err), "consent", pageData{Title: "Allow access", Error: errorMessage(s.errorCode(err))})
			return
		}
		s.toSignIn(c, "/consent?"+oauthQuery)
		return
	}
	prompt, err := s.oauthProvider.DescribeAuthorization(ctx, q)
	if err != nil {
		s.render(c, p, http.StatusBadRequest, "consent", pageData{Title: "Allow access", Error: errorMessage("INVALID_REQUEST")})
		return
	}
	d := pageData{Title: "Allow access", ShowForm: true, Error: errorMessage(code), ClientName: prompt.ClientName,
		UserEmail: string(sess.Auth.User.Email()), OAuthQuery: oauthQuery, Scopes: scopesInWords(prompt.Scopes)}
	s.render(c, p, http.StatusOK, "consent", d, prompt.RedirectOrigin)
}

// consentQuery reads the consent page's address u: the authorization
// request q, the error code a refused answer came back with, and the
// request as the form posts it back (oauth_query), without that code.
func consentQuery(u *url.URL) (q url.Values, code, oauthQuery string) {
	q = u.Query()
	code = q.Get("error")
	oauthQuery = u.RawQuery
	if q.Has("error") {
		q.Del("error")
		oauthQuery = q.Encode()
	}
	return q, code, oauthQuery
}

// scopesInWords says what each of scopes lets a client see, in words where
// it is a scope the page knows, else by its name.
func scopesInWords(scopes []string) []string {
	var words []string
	for _, sc := range scopes {
		if desc, ok := scopeDescriptions[sc]; ok {
			words = append(words, desc)
		} else {
			words = append(words, sc)
		}
	}
	return words
}

// signOutPage confirms an end-session request that the provider could not
// attribute (no valid id_token_hint): the form posts its parameters back.
func (s *API) signOutPage(c *gin.Context, p *pages) {
	q := c.Request.URL.Query()
	if q.Get("done") != "" {
		s.render(c, p, http.StatusOK, "sign-out", pageData{Title: "Signed out", Done: true, Notice: "You are signed out. You can close this window."})
		return
	}
	prompt, err := s.oauthProvider.DescribeLogout(c.Request.Context(), q)
	if err != nil {
		s.render(c, p, http.StatusBadRequest, "sign-out", pageData{Title: "Sign out", Error: errorMessage("INVALID_REQUEST")})
		return
	}
	d := pageData{Title: "Sign out", ShowForm: true, ClientName: prompt.ClientName, Error: errorMessage(q.Get("error"))}
	for _, k := range edge.EndSessionFields {
		if v := q.Get(k); v != "" {
			d.Hidden = append(d.Hidden, hiddenField{k, v})
		}
	}
	s.render(c, p, http.StatusOK, "sign-out", d, prompt.RedirectOrigin)
}

// privateUseScheme reports whether s is a reverse-domain URI scheme (RFC 8252
// §7.1): letters, digits, "+", "-" and ".", starting with a letter, with a dot.
func privateUseScheme(s string) bool {
	if s == "" || !strings.Contains(s, ".") || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// twoFactorPage asks for the second factor: of a sign-in whose password was
// right (the challenge of the two_factor cookie: an authenticator code, a
// backup code or an e-mailed code), or of the signed-in session when an
// application asks for more than it has (step-up, with the same three). Its forms post to the two-factor routes (edge.TwoFactorForm)
// and carry callbackURL, where the browser goes once the answer is right.
func (s *API) twoFactorPage(c *gin.Context, p *pages) {
	cb, ok := s.pageCallback(c)
	if !ok {
		s.render(c, p, http.StatusBadRequest, "two-factor", pageData{Title: "Second factor", SignInURL: "/sign-in",
			Error: errorMessage("INVALID_CALLBACK_URL")})
		return
	}
	code, sent, method := c.Query("error"), c.Query("sent"), c.Query("method")
	d := pageData{Title: "Second factor", CallbackURL: cb, SignInURL: withCallback("/sign-in", cb), Error: errorMessage(code)}
	switch {
	case code == "TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE" || code == "INVALID_TWO_FACTOR_COOKIE":
		// The challenge is over: only a new sign-in helps.
	case s.Cookies.TwoFactorChallenge(c.Request) != "":
		d.codeForms(sent, method)
	default:
		d.stepUp(s.signedInUser(c), sent, method)
	}
	s.render(c, p, http.StatusOK, "two-factor", d, s.callbackOrigins(c, cb)...)
}

// codeForms shows the second-factor page's forms: the e-mailed code's
// first when a code was sent (sent) or asked for (method), and, unless
// the page has an error to show, a notice that one was sent.
func (d *pageData) codeForms(sent, method string) {
	d.ShowForm = true
	d.OTPSent = sent != "" || method == "otp"
	if sent != "" && d.Error == "" {
		d.Notice = noticeMessages["otp-sent"]
	}
}

// stepUp is the second-factor page of a signed-in session's step-up, u
// being its user: the forms, or why there are none (no session, or no
// second factor to prove).
func (d *pageData) stepUp(u *domain.User, sent, method string) {
	switch {
	case u == nil:
		if d.Error == "" {
			d.Error = errorMessage("INVALID_TWO_FACTOR_COOKIE")
		}
	case !u.TwoFactorEnabled():
		d.Error = errorMessage("TWO_FACTOR_NOT_ENABLED")
	default:
		d.codeForms(sent, method)
		d.StepUp = true
	}
}
