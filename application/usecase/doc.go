// Package usecase holds what the use-case packages share, so that none of
// them imports another for it: the audit recorder (Auditor, Target,
// Record), the callers and requests (Caller, TrustedRequest, AdminRequest,
// OrgRequest, KeyRequest, Principal, Actor), the permission checks
// (Permission, Perm, Need, Forbidden), paging (PageRequest, NextCursor,
// MaxPageLimit), the framework's settings (AuthSettings, AdminSettings,
// TokenSettings), the session issuer, link sender and password check that
// several account and admin use cases use, and MustHave.
//
// It holds no use case: a use case belongs to its bounded context's
// package (account/, organization/, admin/, oidc/, servicekey/,
// hostdomain/), in that package's style. Something moves here only when a
// second context needs it.
package usecase
