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
// It holds no use case: a use case belongs to its bounded context's
// package (account/, organization/, admin/, oidc/, servicekey/,
// hostdomain/), in that package's style. Something moves here only when a
// second context needs it.
package usecase
