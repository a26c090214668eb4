// Package account holds the account and session use cases of the
// authentication framework, as services by role: Registration (sign up,
// send and check e-mail verification links), SignIns (sign in, with the
// failed attempts it records after the answer, and the request throttle),
// Sessions (authenticate and refresh, sign out, list and revoke sessions),
// Profile (update the user, change e-mail, delete the user) and Passwords
// (change password, request and complete a reset, set-password links). The
// second factors a sign-in may ask for are the mfa package's.
//
// Style: the one application's doc.go names. Each service is a struct
// holding only the ports it uses, built by NewX(ports..., settings), which
// panics on a nil dependency (usecase.MustHave: a wiring bug), with options
// set after (UseSSO, UseSecondFactor, Observe); one exported method per use
// case, taking ctx and a command struct named for the use case (SignUp,
// ChangeEmail) and returning its result struct (SignUpResult) or a domain
// error. A new use case is a new method on its role's service.
//
// Purger is account's one worker: the purge job of bootstrap's job list
// runs its PurgeExpired, one pass over every table whose rows expire
// (sessions, links, service-key secrets, the OpenID provider's codes and
// grants, challenges, sign-in counts, spent form tokens), through each
// store's port. It lives here because sessions and links, the rows most of
// it removes, are account's.
//
// Errors are domain errors: a kind, a neutral code and a bare field name,
// which each contract package maps to its own wire vocabulary. Tests are
// black-box (package account_test), run on the memory adapters with a
// settable clock (test/usecasetest), and list each condition of a use case
// as a row of a table test where there are several.
package account
