// Package account holds the account and session use cases of the
// authentication framework: sign up, sign in (with its throttle and the
// failed attempts it records), authenticate, sign out, revoke sessions,
// change e-mail and password, update and delete user, verify e-mail, reset
// password, and purge what has expired. The second factors a sign-in may
// ask for are the mfa package's.
//
// Style: a handler per use case, the older of the two styles application's
// doc.go names; the context becomes services by role (registration,
// sign-in, sessions, profile, credentials) in a change of its own that
// moves every call site at once. A use case is a command struct named for
// it (SignUp), a FooHandler struct holding only the ports it uses, a
// NewFooHandler(ports..., settings) constructor that panics on a nil
// dependency (usecase.MustHave: a wiring bug), and one method
// Handle(ctx, cmd Foo) (*FooResult, error); a handler whose use case has
// two steps (ResetPasswordHandler's Request and Reset) names each.
//
// Errors are domain errors: a kind, a neutral code and a bare field name,
// which each contract package maps to its own wire vocabulary. Tests are
// black-box (package account_test), run on the memory adapters with a
// settable clock (test/usecasetest), and list each condition of a use case
// as a row of a table test where there are several.
package account
