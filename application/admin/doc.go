// Package admin holds the admin plugin's use cases: platform administrators
// managing users, their sessions and impersonation, the trusted API's users
// (a service key doing the same), the bootstrap administrator and paging
// through users; what operators see of users' organizations
// (Memberships); the console's single-use form tokens (ConsoleForms); the
// audit log (AuditLog) and the overview of the service (Dashboard), which
// only platform administrators read. What operators do of a user's factors
// is mfa.Factors, on Administration's authorised frame (ChangeUser).
//
// One style: a service per role within the context (Administration,
// Memberships, ConsoleForms, AuditLog, Dashboard), with one exported method
// per use case. A method takes ctx, then
// what names the caller where there is one (a usecase request type, which
// gives the audit Actor, or the principal), then the target's id and a
// command or patch struct. The service decides every permission question
// itself, and an administrative action is recorded in the audit log, refusals
// included. A use case more than one kind of caller may call takes a
// usecase.Caller and checks it: a signed-in user needs the admin permission
// or the membership role, a service key (usecase.TrustedRequest) the
// operation's scope (domain.Scope). A new use case in this context is a new
// method on its service, never a separate handler type.
//
// Constructors panic on a nil dependency (usecase.MustHave: a wiring bug).
// Errors are domain errors: a kind, a neutral code and a bare field name,
// which each contract package maps to its own wire vocabulary. Tests are
// black-box (package admin_test), run on the memory adapters with a settable
// clock (test/usecasetest).
package admin
