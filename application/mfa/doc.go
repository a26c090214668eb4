// Package mfa holds the second factors: two-factor sign-in (Better Auth's
// twoFactor plugin: a TOTP factor with backup codes, e-mailed codes, trusted
// browsers), passkeys (@better-auth/passkey: registering WebAuthn
// credentials, signing in and stepping a session up with one), and what
// operators see and do of a user's factors (reading them, resetting them,
// mailing a password reset link).
//
// One style: a service per role. TwoFactor is a user's two-factor, Passkeys
// a user's passkeys, Factors the operators' view of both; each is a struct
// holding only the ports it uses, built by a constructor that panics on a
// nil dependency (usecase.MustHave), with one exported method per use case
// taking a command struct (EnableTwoFactor, VerifySecondFactor, …) or the
// caller (usecase.Caller) where the use case needs permission. A new use
// case of this context is a new method on its service.
//
// What password sign-in (account) and upstream sign-in (federation) share
// with it lives in usecase: the challenge a sign-in starts instead of a
// session (StartMFAChallenge, MFAChallengeTTL, MFAMaxAttempts), the trusted
// browsers, the account lockout's ErrAccountLocked and the counting of
// sign-ins by outcome. What it needs of another context it names as a
// small interface of its own (Operators, ResetLinks), which bootstrap binds.
//
// Errors are domain errors: a kind, a neutral code and a bare field name,
// which each contract package maps to its own wire vocabulary. Tests are
// black-box (package mfa_test), run on the memory adapters with a settable
// clock (test/usecasetest).
package mfa
