// Package usecase holds what the use-case packages share, so that none of
// them imports another for it: the audit recorder and the events writer
// (Auditor, Target, Change, Record, Events, Emit), which keep a change, its
// audit entry and its events in one unit of work; the callers and requests
// (Caller, TrustedRequest, AdminRequest, OrgRequest, KeyRequest, Principal,
// Actor), the permission checks (Permission, Perm, Need, Forbidden), paging
// (PageRequest, NextCursor, MaxPageLimit), the framework's settings
// (AuthSettings, AdminSettings, TokenSettings), the session issuer and
// revoker, link sender and password check that several account and admin
// use cases use, and MustHave.
//
// It also holds what password sign-in, upstream sign-in and the second
// factors share: the MFA challenge (StartMFAChallenge, MFAChallengeTTL,
// MFAMaxAttempts), the trusted browsers, ErrAccountLocked and the counting
// of sign-ins by outcome (SignInOutcome, CountSignIn); and what every
// operator's use case answers of a missing user (ErrAdminUserNotFound).
//
// It holds no use case: a use case belongs to its bounded context's
// package (account/, mfa/, organization/, admin/, oidc/, servicekey/,
// hostdomain/, federation/, webhook/), in the style application's doc.go
// states. Something moves here only when a second context needs it.
package usecase
