// Package federation holds the use cases of signing in with an upstream
// identity provider (Better Auth's social sign-in wire, OpenID Connect and
// GitHub): starting a sign-in or a link, the provider's callback, a native
// app's ID token, the user's linked accounts and their upstream tokens, and
// the administrators' management of providers.
//
// Accounts are keyed by (provider, subject), never by e-mail alone. A new
// upstream identity whose address belongs to an existing user joins that
// user only when the provider is trusted for linking, says the address is
// verified, and the local address is verified too; otherwise the user
// signs in and links it explicitly. The PKCE verifier, the nonce and every
// upstream token are sealed at rest; the state parameter is stored only as
// a hash, bound to a signed browser cookie, and used once.
//
// One style: a service per role (SignIns, Accounts, Providers, Router), each
// a struct holding only the ports it uses, built by a constructor that
// panics on a nil dependency (usecase.MustHave), with one method per use
// case; a use case an operator calls takes the caller (usecase.Caller) and
// checks it (LinkedFor, not Linked, answers another user's accounts).
package federation
