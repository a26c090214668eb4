package framework

import (
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

// addFrameworkRoutes registers the authentication framework (Better Auth's
// core routes, better-auth-wire §6) in the framework and auth contracts.
func (s *API) AddFrameworkRoutes() {
	type op = huma.Operation
	const (
		tagAuth    = "Sign-up and sign-in"
		tagSession = "Sessions"
		tagAccount = "Account"
		tagLinks   = "E-mail links"
	)
	both := func(o op) op {
		o.Path = edge.FrameworkBase + o.Path
		if o.Errors == nil {
			o.Errors = []int{}
		}
		o.Errors = append(o.Errors, http.StatusTooManyRequests)
		return o
	}
	signedIn := func(o op) op {
		o.Security = edge.SessionSecurity
		o.Errors = append(o.Errors, http.StatusUnauthorized, http.StatusForbidden)
		return both(o)
	}
	// Better Auth's stricter rules (better-auth-wire §4); the rest take the
	// general rule.
	credentials := func(o op) op { return edge.WithRate(both(o), edge.RateCredentials) }
	mail := func(o op) op { return edge.WithRate(both(o), edge.RateMail) }
	fw := edge.ContractFramework

	edge.Add(s.routes, fw, edge.WithPolicy(credentials(op{OperationID: "signUpEmail", Method: http.MethodPost, Path: "/sign-up/email", Tags: []string{tagAuth},
		Summary: "Sign up with e-mail and password",
		Description: "Creates an account and mails a verification link. When e-mail verification is required (the default) nobody is signed in " +
			"and token is null; a taken address gets the same answer, and its owner a mail. Accepts JSON or an HTML form.",
		Errors: []int{http.StatusForbidden, http.StatusUnprocessableEntity}}), edge.FormPage(edge.SignUpForm), edge.LoginRoute), s.signUp, edge.ContractAuth)
	edge.Add(s.routes, fw, edge.WithPolicy(credentials(op{OperationID: "signInEmail", Method: http.MethodPost, Path: "/sign-in/email", Tags: []string{tagAuth},
		Summary: "Sign in with e-mail and password",
		Description: "Starts a session and sets the session cookie. A wrong password, an unknown address and a locked account all answer " +
			"401 INVALID_EMAIL_OR_PASSWORD. With callbackURL the answer is still 200, with {redirect:true, url} and a Location header. Accepts JSON or an HTML form.",
		Errors: []int{http.StatusUnauthorized, http.StatusForbidden}}), edge.FormPage(edge.SignInForm), edge.LoginRoute), s.signIn, edge.ContractAuth)
	edge.Add(s.routes, fw, edge.WithPolicy(both(op{OperationID: "signOut", Method: http.MethodPost, Path: "/sign-out", Tags: []string{tagSession},
		Summary: "Sign out", Description: "Ends the current session and expires the cookies. Succeeds without a session too, and in an impersonation session.",
		Errors: []int{http.StatusForbidden}}), edge.AllowedWhileImpersonating), s.signOut, edge.ContractAuth)
	edge.Add(s.routes, fw, both(op{OperationID: "getSession", Method: http.MethodGet, Path: "/get-session", Tags: []string{tagSession},
		Summary: "Current session",
		Description: "Returns the session and its user, or null when signed out (a forged, stale or expired cookie is cleared). " +
			"A remembered session is pushed forward once a day and its cookie re-issued. One indexed query."}), s.getSession, edge.ContractAuth)
	edge.Add(s.routes, fw, signedIn(op{OperationID: "listSessions", Method: http.MethodGet, Path: "/list-sessions", Tags: []string{tagSession},
		Summary: "List sessions", Description: "The signed-in user's live sessions, newest first. token is each session's public handle, never its bearer token."}),
		s.listSessions, edge.ContractAuth)
	edge.Add(s.routes, fw, signedIn(op{OperationID: "revokeSession", Method: http.MethodPost, Path: "/revoke-session", Tags: []string{tagSession},
		Summary: "Revoke a session", Description: "Ends one of the user's sessions by its handle. Another user's or an unknown handle changes nothing and still answers {status:true}."}),
		s.revokeSession, edge.ContractAuth)
	edge.Add(s.routes, fw, signedIn(op{OperationID: "revokeSessions", Method: http.MethodPost, Path: "/revoke-sessions", Tags: []string{tagSession},
		Summary: "Revoke all sessions", Description: "Ends every session of the user, this one included."}), s.revokeSessions, edge.ContractAuth)
	edge.Add(s.routes, fw, signedIn(op{OperationID: "revokeOtherSessions", Method: http.MethodPost, Path: "/revoke-other-sessions", Tags: []string{tagSession},
		Summary: "Revoke other sessions", Description: "Ends every session of the user but this one."}), s.revokeOtherSessions, edge.ContractAuth)
	edge.Add(s.routes, fw, signedIn(op{OperationID: "updateUser", Method: http.MethodPost, Path: "/update-user", Tags: []string{tagAccount},
		Summary: "Update the profile", Description: "Changes the name or image. The address changes through change-email."}), s.updateUser, edge.ContractAuth)
	edge.Add(s.routes, fw, edge.WithRate(signedIn(op{OperationID: "changePassword", Method: http.MethodPost, Path: "/change-password", Tags: []string{tagAccount},
		Summary:     "Change the password",
		Description: "Needs the current password (a wrong one counts towards the account lockout). With revokeOtherSessions every session ends and this device gets a new one." + stepUpNote}), edge.RateCredentials),
		s.changePassword, edge.ContractAuth)
	edge.Add(s.routes, fw, edge.WithRate(signedIn(op{OperationID: "changeEmail", Method: http.MethodPost, Path: "/change-email", Tags: []string{tagAccount},
		Summary: "Change the e-mail address",
		Description: "Mails a verification link to the new address; the account moves when it is followed. Needs a fresh session (403 SESSION_NOT_FRESH). " +
			"An address that has an account gets no mail, and the answer does not say so." + stepUpNote}), edge.RateCredentials), s.changeEmail, edge.ContractAuth)
	edge.Add(s.routes, fw, signedIn(op{OperationID: "deleteUser", Method: http.MethodPost, Path: "/delete-user", Tags: []string{tagAccount},
		Summary:     "Delete the account",
		Description: "With the password (or the token from the confirmation mail) the account is deleted at once; with neither, a confirmation mail is sent." + stepUpNote}),
		s.deleteUser, edge.ContractAuth)
	edge.Add(s.routes, fw, edge.WithPolicy(signedIn(op{OperationID: "deleteUserCallback", Method: http.MethodGet, Path: "/delete-user/callback", Tags: []string{tagLinks},
		Summary:     "Confirm deleting the account",
		Description: "The link from the confirmation mail, followed while signed in. With callbackURL: 302 there (errors as ?error=CODE); without: JSON." + stepUpNote,
		Responses:   map[string]*huma.Response{"302": {Description: "To callbackURL."}}, Errors: []int{http.StatusNotFound}}), edge.RefusedWhileImpersonating),
		s.deleteUserCallback, edge.ContractAuth)
	edge.Add(s.routes, fw, edge.WithForm(mail(op{OperationID: "requestPasswordReset", Method: http.MethodPost, Path: "/request-password-reset", Tags: []string{tagLinks},
		Summary: "Request a password reset", Description: "Mails a reset link when the address has an account. The answer is the same either way.",
		Errors: []int{http.StatusForbidden}}), edge.ForgotPasswordForm), s.requestPasswordReset, edge.ContractAuth)
	edge.Add(s.routes, fw, both(op{OperationID: "resetPasswordLink", Method: http.MethodGet, Path: "/reset-password/{token}", Tags: []string{tagLinks},
		Summary: "Follow a reset link", Description: "302 to callbackURL with ?token=…, where the application asks for the new password.",
		DefaultStatus: http.StatusFound, Errors: []int{http.StatusForbidden}}), s.resetPasswordLink, edge.ContractAuth)
	edge.Add(s.routes, fw, edge.WithForm(both(op{OperationID: "resetPassword", Method: http.MethodPost, Path: "/reset-password", Tags: []string{tagLinks},
		Summary:     "Reset the password",
		Description: "Sets a new password with the token of a reset link. The token works once; every session of the user ends; a lockout is lifted."}), edge.ResetPasswordForm),
		s.resetPassword, edge.ContractAuth)
	edge.Add(s.routes, fw, mail(op{OperationID: "sendVerificationEmail", Method: http.MethodPost, Path: "/send-verification-email", Tags: []string{tagLinks},
		Summary:     "Send a verification link",
		Description: "Mails a new verification link. Signed out, the answer is always {status:true}; signed in, EMAIL_MISMATCH and EMAIL_ALREADY_VERIFIED are reported.",
		Errors:      []int{http.StatusForbidden}}), s.sendVerificationEmail, edge.ContractAuth)
	edge.Add(s.routes, fw, both(op{OperationID: "verifyEmail", Method: http.MethodGet, Path: "/verify-email", Tags: []string{tagLinks},
		Summary:     "Follow a verification link",
		Description: "Marks the address verified (or moves the account to a new, verified address). With callbackURL: 302 there (errors as ?error=CODE); without: JSON, or 401 INVALID_TOKEN / TOKEN_EXPIRED.",
		Responses:   map[string]*huma.Response{"302": {Description: "To callbackURL."}}, Errors: []int{http.StatusUnauthorized, http.StatusForbidden}}),
		s.verifyEmail, edge.ContractAuth)
	edge.Add(s.routes, fw, both(op{OperationID: "errorPage", Method: http.MethodGet, Path: "/error", Tags: []string{tagLinks},
		Summary: "Error page", Description: "A small HTML page showing an error code to a person whose browser landed here.",
		Responses: map[string]*huma.Response{"200": {Description: "An HTML page.", Content: map[string]*huma.MediaType{"text/html": {Schema: &huma.Schema{Type: "string"}}}}}}),
		s.errorPage, edge.ContractAuth)
	s.documentNullBody("/get-session")
}

// documentNullBody says that a GET operation's 200 body may be the JSON
// literal null (get-session when signed out), which Huma cannot infer from a
// nil pointer.
func (s *API) documentNullBody(path string) {
	for _, doc := range s.Documents() {
		item := doc.Paths[edge.FrameworkBase+path]
		if item == nil || item.Get == nil || item.Get.Responses["200"] == nil {
			continue
		}
		for _, mt := range item.Get.Responses["200"].Content {
			if mt.Schema != nil && mt.Schema.Ref != "" {
				mt.Schema = &huma.Schema{AnyOf: []*huma.Schema{{Ref: mt.Schema.Ref}, {Type: "null"}}}
			}
		}
	}
}
