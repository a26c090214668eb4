package gormstore

// SessionLookupSQL exposes the session lookup so that the external tests can
// EXPLAIN the very query the repository runs.
const SessionLookupSQL = sessionLookupSQL

// Transaction exposes the bounded transaction every repository runs in.
var Transaction = transaction
