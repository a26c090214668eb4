package edge

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// SessionCookies names, writes and reads the framework's cookies exactly as
// Better Auth does (better-auth-wire §2): <prefix>.session_token holds the
// signed token; <prefix>.dont_remember marks a session the user chose not to
// keep; both get __Secure- and Secure on https (__Host- with HostCookies).
type SessionCookies struct {
	Signer       *CookieSigner
	secure       bool
	sessionName  string
	dontRemember string
	sessionData  string
	// AdminSession keeps an administrator's own session while they
	// impersonate someone (the admin plugin's admin_session cookie).
	AdminSession string
	// twoFactor carries the pending second-factor challenge of a password
	// sign-in (Better Auth's two_factor cookie).
	twoFactor string
	// trustDevice lets a browser that answered a second factor skip it at
	// the next sign-ins (Better Auth's trust_device cookie).
	trustDevice string
	// passkey carries the id of a pending WebAuthn ceremony (Better Auth's
	// better-auth-passkey cookie).
	passkey string
	// oauthState binds a sign-in at an upstream provider to the browser
	// that started it (Better Auth's state cookie).
	oauthState string
	// ConsoleSeen is the admin console's last visit, bound to the session
	// (the console's idle timeout).
	ConsoleSeen string
	lifetime    time.Duration
}

func newSessionCookies(cfg Config, lifetime time.Duration) *SessionCookies {
	secure := strings.HasPrefix(cfg.BaseURL, "https://")
	prefix := cfg.CookiePrefix
	if prefix == "" {
		prefix = "gatehouse"
	}
	switch {
	case secure && cfg.HostCookies:
		// Every cookie here is host-only with Path=/, as __Host- requires.
		prefix = "__Host-" + prefix
	case secure:
		prefix = "__Secure-" + prefix
	}
	return &SessionCookies{
		Signer: newCookieSigner(cfg.Secrets), secure: secure, lifetime: lifetime,
		sessionName: prefix + ".session_token", dontRemember: prefix + ".dont_remember", sessionData: prefix + ".session_data",
		AdminSession: prefix + ".admin_session", twoFactor: prefix + ".two_factor",
		trustDevice: prefix + ".trust_device", passkey: prefix + ".better-auth-passkey", oauthState: prefix + ".state",
		ConsoleSeen: prefix + ".console_seen",
	}
}

// AdminSessionCookie returns the admin_session cookie that keeps an
// administrator's own session (token, and whether it was "don't
// remember") aside while they impersonate someone.
func (sc *SessionCookies) AdminSessionCookie(token string, s *domain.Session) http.Cookie {
	return sc.Cookie(sc.AdminSession, sc.Signer.Sign(token+":"+strconv.FormatBool(!s.RememberMe())), 0)
}

// AdminToken returns the administrator's own session token that a
// request's admin_session cookie carries, or "" when there is none or its
// signature does not hold.
func (sc *SessionCookies) AdminToken(r *http.Request) string {
	c, err := r.Cookie(sc.AdminSession)
	if err != nil {
		return ""
	}
	v, ok := sc.Signer.Verify(c.Value)
	if !ok {
		return ""
	}
	token, _, _ := strings.Cut(v, ":")
	return token
}

// TrustDeviceCookie returns the signed trust_device cookie carrying token
// for ttl (Better Auth: 30 days).
func (sc *SessionCookies) TrustDeviceCookie(token string, ttl time.Duration) http.Cookie {
	return sc.Cookie(sc.trustDevice, sc.Signer.Sign(token), int(ttl/time.Second))
}

// ClearTrustDevice returns the cookie that expires trust_device.
func (sc *SessionCookies) ClearTrustDevice() http.Cookie { return sc.Cookie(sc.trustDevice, "", -1) }

// TrustedDevice returns the token a request's trust_device cookie carries,
// or "" when there is none or its signature does not hold (a forged cookie
// is ignored, as Better Auth ignores it).
func (sc *SessionCookies) TrustedDevice(r *http.Request) string {
	return sc.signedToken(r, sc.trustDevice)
}

// TwoFactorCookie returns the signed two_factor cookie that carries the id
// of a pending second-factor challenge for ttl (Better Auth: 600 s).
func (sc *SessionCookies) TwoFactorCookie(id string, ttl time.Duration) http.Cookie {
	return sc.Cookie(sc.twoFactor, sc.Signer.Sign(id), int(ttl/time.Second))
}

// ClearTwoFactor returns the cookie that expires two_factor.
func (sc *SessionCookies) ClearTwoFactor() http.Cookie { return sc.Cookie(sc.twoFactor, "", -1) }

// TwoFactorChallenge returns the challenge id a request's two_factor cookie
// carries, or "" when there is none or its signature does not hold.
func (sc *SessionCookies) TwoFactorChallenge(r *http.Request) string {
	return sc.signedToken(r, sc.twoFactor)
}

// PasskeyCookie returns the signed better-auth-passkey cookie that carries
// the id of a pending WebAuthn ceremony for ttl (Better Auth: 300 s).
func (sc *SessionCookies) PasskeyCookie(id string, ttl time.Duration) http.Cookie {
	return sc.Cookie(sc.passkey, sc.Signer.Sign(id), int(ttl/time.Second))
}

// PasskeyChallenge returns the ceremony id a request's better-auth-passkey
// cookie carries, or "" when there is none or its signature does not hold.
func (sc *SessionCookies) PasskeyChallenge(r *http.Request) string {
	return sc.signedToken(r, sc.passkey)
}

// OAuthStateCookie returns the signed state cookie that binds a sign-in at
// an upstream provider to this browser for ttl.
func (sc *SessionCookies) OAuthStateCookie(state string, ttl time.Duration) http.Cookie {
	return sc.Cookie(sc.oauthState, sc.Signer.Sign(state), int(ttl/time.Second))
}

// ClearOAuthState returns the cookie that expires the state cookie.
func (sc *SessionCookies) ClearOAuthState() http.Cookie { return sc.Cookie(sc.oauthState, "", -1) }

// OAuthState returns the state a request's state cookie carries, or "" when
// there is none or its signature does not hold.
func (sc *SessionCookies) OAuthState(r *http.Request) string {
	return sc.signedToken(r, sc.oauthState)
}

// signedToken returns the token of the signed cookie name, or "".
func (sc *SessionCookies) signedToken(r *http.Request, name string) string {
	c, err := r.Cookie(name)
	if err != nil || c.Value == "" {
		return ""
	}
	if id, ok := sc.Signer.Verify(c.Value); ok && isSessionToken(id) {
		return id
	}
	return ""
}

func (sc *SessionCookies) Cookie(name, value string, maxAge int) http.Cookie {
	return http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true, Secure: sc.secure, SameSite: http.SameSiteLaxMode} // #nosec G124 -- Secure whenever the base URL is https; a browser drops Secure cookies on plain-http development hosts
}

// Issue returns the cookies that carry a new or refreshed session. A session
// the user chose not to remember gets a browser-session cookie (no Max-Age).
func (sc *SessionCookies) Issue(token string, s *domain.Session) []http.Cookie {
	if !s.RememberMe() {
		return []http.Cookie{sc.Cookie(sc.sessionName, sc.Signer.Sign(token), 0), sc.Cookie(sc.dontRemember, sc.Signer.Sign("true"), 0)}
	}
	maxAge := int((time.Until(s.ExpiresAt()) + time.Second - 1) / time.Second)
	if maxAge <= 0 {
		maxAge = int(sc.lifetime / time.Second)
	}
	return []http.Cookie{sc.Cookie(sc.sessionName, sc.Signer.Sign(token), maxAge)}
}

// clear returns cookies that expire every session cookie.
func (sc *SessionCookies) clear() []http.Cookie {
	return []http.Cookie{sc.Cookie(sc.sessionName, "", -1), sc.Cookie(sc.sessionData, "", -1), sc.Cookie(sc.dontRemember, "", -1)}
}

// Clear returns cookies that expire every session cookie: a browser page
// that ended its own session (the account pages) signs the browser out.
func (sc *SessionCookies) Clear() []http.Cookie { return sc.clear() }

// Token returns the session Token a request carries: from the session
// cookie when its signature holds, else from Authorization: Bearer (signed,
// URL-encoded or not, or the raw Token, as Better Auth's bearer plugin
// accepts). hadCookie reports whether a session cookie was sent at all, so
// that a stale or forged one can be cleared.
func (sc *SessionCookies) Token(r *http.Request) (token string, hadCookie bool) {
	if c, err := r.Cookie(sc.sessionName); err == nil && c.Value != "" {
		hadCookie = true
		if t, ok := sc.Signer.Verify(c.Value); ok && isSessionToken(t) {
			return t, true
		}
	}
	auth := r.Header.Get("Authorization")
	if len(auth) > 7 && strings.EqualFold(auth[:7], "bearer ") {
		v := strings.TrimSpace(auth[7:])
		if t, ok := sc.Signer.Verify(v); ok && isSessionToken(t) {
			return t, hadCookie
		}
		if isSessionToken(v) {
			return v, hadCookie
		}
	}
	return "", hadCookie
}

// isSessionToken reports whether s has the shape of a session token: 32
// characters from [A-Za-z0-9].
func isSessionToken(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// SessionHeaders are the response headers of an operation that may sign
// someone in or out. set-auth-token gives the signed token to callers that
// cannot keep cookies (Better Auth's bearer plugin).
type SessionHeaders struct {
	SetCookie    []http.Cookie `header:"Set-Cookie" doc:"Session cookies set or expired."`
	SetAuthToken string        `header:"set-auth-token" doc:"The signed session token, for callers that send it as Authorization: Bearer instead of keeping cookies."`
}

func (h *SessionHeaders) SignIn(sc *SessionCookies, token string, s *domain.Session) {
	h.SetCookie = append(h.SetCookie, sc.Issue(token, s)...)
	h.SetAuthToken = sc.Signer.SignRaw(token)
}

func (h *SessionHeaders) SignOut(sc *SessionCookies) {
	h.SetCookie = append(h.SetCookie, sc.clear()...)
}
