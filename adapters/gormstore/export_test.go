package gormstore

// SessionLookupSQL exposes the session lookup so that the external tests can
// EXPLAIN the very query the repository runs (gorm writes its ? as $1 on
// PostgreSQL, which is sessionLookupPostgres).
const SessionLookupSQL = sessionLookupSQL

// Transaction exposes the bounded transaction every repository runs in.
var Transaction = transaction

// SignInLookupSQL exposes the sign-in lookup (CredentialRepository.GetByEmail)
// so that the external tests can EXPLAIN it.
const SignInLookupSQL = signInLookupSQL
