package gormstore

// SessionLookupSQL exposes the session lookup so that the external tests can
// EXPLAIN the very query the repository runs.
const SessionLookupSQL = sessionLookupSQL
