// Package command holds the use cases that change state.
//
// The package has two styles today, and which one a use case takes follows
// from its bounded context, not from taste:
//
//   - Account and session use cases of the authentication framework (sign up,
//     sign in, authenticate, sign out, revoke sessions, change e-mail and
//     password, update and delete user, verify e-mail, reset password,
//     throttle, purge expired) are one handler each: a command struct named
//     for the use case (SignUp), a FooHandler struct holding only the ports
//     it uses, NewFooHandler(ports..., settings), and one method
//     Handle(ctx, cmd Foo) (*FooResult, error). A new account use case is a
//     new file with a new handler.
//   - Each other bounded context is one service object with one exported
//     method per use case: Administration (platform admin and the trusted
//     API's users), Organizations (organizations, members, invitations, for
//     members and for the trusted API), Domains, ServiceKeys, OAuthClients,
//     OAuthProvider and SigningKeys. A method takes ctx, the request that
//     names the caller (AdminRequest, OrgRequest, KeyRequest or
//     TrustedRequest, each giving the audit Actor), then the target's id and
//     a command or patch struct. The service decides every permission
//     question itself. A use case more than one kind of caller may call
//     takes a Caller and checks it: a signed-in user needs the admin
//     permission or the membership role, a service key (TrustedRequest) the
//     operation's scope (domain.Scope). The trusted API calls these shared
//     use cases directly: there is no per-contract facade, and the errors
//     are the same neutral conditions for every caller, which the trusted
//     API words in its own vocabulary at the edge. A new use case in one of
//     these contexts is a new method on its service; a new context is a new
//     service.
//
// Common to both: constructors panic on a nil dependency (mustHave), since
// that is a wiring bug. Errors are domain errors: a kind, a neutral code and
// a bare field name, which each contract package maps to its own wire
// vocabulary (make archcheck, rule 4). Tests are black-box (package
// command_test), run on the memory adapters with a settable clock, and list
// each condition of a use case as a row of a table test where there are
// several.
//
// The split of this package by bounded context (account/, organization/,
// admin/, oidc/, servicekey/, hostdomain/; STYLE 2.0) will give each package
// one of the two styles.
package command
