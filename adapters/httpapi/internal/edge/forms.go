package edge

import (
	"net/url"
	"regexp"
)

// The forms of the hosted pages, each declared on the route it posts to
// (WithForm): the page, the fields carried back with an error, and where a
// success goes.
var (
	SignInForm = pageForm(Form{Page: "/sign-in", Keep: []string{"callbackURL"},
		Done: func(form url.Values, signedIn bool) string {
			if !signedIn {
				// Two-factor is on: the second-factor page answers the
				// challenge of the two_factor cookie.
				return PageURL(TwoFactorPath, url.Values{"callbackURL": {form.Get("callbackURL")}})
			}
			return AccountPath
		}})
	// TwoFactorForm is the second-factor page's code forms (verify-totp,
	// verify-backup-code, verify-otp): callbackURL is the page's, not the
	// operation's.
	TwoFactorForm = pageForm(Form{Page: TwoFactorPath, Keep: []string{"callbackURL", "method"}, PageOnly: []string{"callbackURL", "method"},
		Done: func(form url.Values, _ bool) string {
			if cb := form.Get("callbackURL"); cb != "" {
				return cb
			}
			return AccountPath
		}})
	// TwoFactorSendForm is the second-factor page's "e-mail me a code".
	TwoFactorSendForm = pageForm(Form{Page: TwoFactorPath, Keep: []string{"callbackURL", "method"}, PageOnly: []string{"callbackURL", "method"},
		Done: func(form url.Values, _ bool) string {
			return PageURL(TwoFactorPath, url.Values{"callbackURL": {form.Get("callbackURL")}, "method": {"otp"}, "sent": {"1"}})
		}})
	SignUpForm = pageForm(Form{Page: "/sign-up", Keep: []string{"callbackURL"},
		Done: func(form url.Values, signedIn bool) string {
			if !signedIn {
				return PageURL("/sign-in", url.Values{"notice": {"check-email"}, "callbackURL": {form.Get("callbackURL")}})
			}
			if cb := form.Get("callbackURL"); cb != "" {
				return cb
			}
			return AccountPath
		}})
	// SocialSignInForm is the sign-in page's "Continue with …" buttons: a
	// success goes to the provider (the answer's Location).
	SocialSignInForm   = pageForm(Form{Page: "/sign-in", Keep: []string{"callbackURL"}})
	ForgotPasswordForm = pageForm(Form{Page: "/forgot-password",
		Done: func(url.Values, bool) string { return "/forgot-password?sent=1" }})
	ResetPasswordForm = pageForm(Form{Page: "/reset-password", Keep: []string{"token"},
		Done: func(url.Values, bool) string { return "/sign-in?notice=password-reset" }})
	ConsentForm    = pageForm(Form{Page: "/consent"})
	EndSessionForm = pageForm(Form{Page: "/sign-out", Keep: EndSessionFields,
		Done: func(url.Values, bool) string { return "/sign-out?done=1" }})
)

// LoginRoute declares sign-in or sign-up: the origin check refuses login
// CSRF on it even without a cookie.
func LoginRoute(p *Policy) { p.Login = true }

// pageForm completes f with the fields the pages' forms share: the
// checkboxes and buttons (rememberMe, accept) and the optional fields an
// empty input leaves out (callbackURL, redirectTo and end-session's).
func pageForm(f Form) *Form {
	f.Bools = []string{"rememberMe", "accept", "trustDevice"}
	f.Optional = append([]string{"callbackURL", "redirectTo", "errorCallbackURL"}, EndSessionFields...)
	return &f
}

// EndSessionFields are the parameters of an end-session request (OpenID
// Connect RP-Initiated Logout §2) the sign-out page carries.
var EndSessionFields = []string{"id_token_hint", "client_id", "post_logout_redirect_uri", "state", "logout_hint", "ui_locales"}

// PageURL is path with the non-empty values of q.
func PageURL(path string, q url.Values) string {
	for k, v := range q {
		if len(v) == 0 || v[0] == "" {
			delete(q, k)
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// TwoFactorPath is the second-factor page: a sign-in's challenge, or a
// step-up of the session.
const TwoFactorPath = "/two-factor"

// AccountPath is the account page, where a sign-in without a callback ends.
const AccountPath = "/account"

var ErrorCodePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
