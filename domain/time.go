package domain

import "time"

// Timestamp normalises t to UTC at microsecond precision, the precision both
// SQLite and PostgreSQL keep. Entities pass every instant through it, so a
// value read back from any store equals the value written.
func Timestamp(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
