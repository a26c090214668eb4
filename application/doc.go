// Package application holds Gatehouse's use cases, one package per bounded
// context: account/, mfa/, organization/, admin/, oidc/, servicekey/,
// hostdomain/, federation/, webhook/, outbox/ and health/, and usecase/,
// what they share. Each use case is built on ports and decides every policy
// question; the HTTP edge only translates. Application (app.go) gathers the
// services the edge calls, one field per context, for wiring; the workers
// are bootstrap's.
//
// One use-case style: a service per bounded context, or per role within it
// (organization.Organizations; account.Registration, SignIns, Sessions,
// Profile and Passwords; mfa.TwoFactor, Passkeys and Factors;
// admin.Administration, Memberships, ConsoleForms, AuditLog and Dashboard;
// federation.SignIns, Accounts and Providers). A service is a struct holding
// only the ports it uses, built by a NewX constructor that panics on a nil
// dependency (usecase.MustHave: a wiring bug), with one exported method per
// use case: ctx, then the caller where the use case needs permission (a
// usecase.Caller, or the principal), then the target and a command struct.
// A new use case is a new method on its context's service. A handler of one
// use case (a FooHandler with one Handle method) is allowed only where a
// context has that one use case (health.ReadinessHandler); a worker that
// bootstrap's job list runs (outbox.Relay, webhook.Fanout and Sender,
// account.Purger) is a service whose use case is its pass.
//
// No context imports another (archcheck rule 7): what several share lives
// in usecase, and what one needs of another's use case it names as a small
// interface of its own (mfa.Operators; mfa.ResetLinks and
// admin.PasswordLinks, which account.Passwords meets), which bootstrap
// binds to the other context's service.
package application
