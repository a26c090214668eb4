// Package servicekey holds the service keys a consumer's backend calls the trusted
// API with: their creation, listing, rotation and revocation by an
// administrator (or the command line), and the authentication of a key
// with the batched write of its last use.
//
// One style: a service per bounded context. ServiceKeys is the one service,
// with one exported method per use case. A method takes ctx, then what names
// the caller where there is one (a usecase request type, which gives the
// audit Actor, or the principal), then the target's id and a command or patch
// struct. The service decides every permission question itself, and an
// administrative action is recorded in the audit log, refusals included. A
// use case more than one kind of caller may call takes a usecase.Caller and
// checks it: a signed-in user needs the admin permission or the membership
// role, a service key (usecase.TrustedRequest) the operation's scope
// (domain.Scope). A new use case in this context is a new method on its
// service, never a separate handler type.
//
// Constructors panic on a nil dependency (usecase.MustHave: a wiring bug).
// Errors are domain errors: a kind, a neutral code and a bare field name,
// which each contract package maps to its own wire vocabulary. Tests are
// black-box (package servicekey_test), run on the memory adapters with a settable
// clock (test/usecasetest).
package servicekey
