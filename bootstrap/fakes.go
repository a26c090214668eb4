package bootstrap

import (
	"github.com/gatehouse/gatehouse/adapters/passwordhash"
	"github.com/gatehouse/gatehouse/adapters/system"
	"github.com/gatehouse/gatehouse/ports"
)

// Fakes are what the tests' injectors (InitializeMemoryWithFakes,
// InitializeSQLWithFakes) take in place of production's parts. A nil field
// keeps production's, so the zero Fakes wire what InitializeMemory and
// InitializeSQL wire.
type Fakes struct {
	// Clock tells the time to the whole application (sessions, tokens,
	// lockouts, the verifier's schedule, the outboxes…), so that a test
	// can move it instead of waiting for time to pass. The jobs' tickers
	// still tick on the wall clock.
	Clock ports.Clock
	// PasswordHashing are argon2id's costs. The black-box tests hash with
	// small ones (a mebibyte, one pass), but for the tests of hashing
	// itself: hundreds of sign-ups at production's 19 MiB each were much of
	// the suite's time and memory, and prove nothing the hashing tests
	// don't.
	PasswordHashing *passwordhash.Params
	// AuditLog and Outbox wrap the audit log and the outbox that the
	// changes write to, for the tests that make those writes fail.
	AuditLog func(ports.AuditLog) ports.AuditLog
	Outbox   func(ports.Outbox) ports.Outbox
}

// fakeHasher hashes with f's costs, or production's.
func fakeHasher(f Fakes) *passwordhash.Hasher {
	if f.PasswordHashing != nil {
		return passwordhash.New(*f.PasswordHashing, 0)
	}
	return passwordhash.NewDefault()
}

// fakeClock is f's clock, or the system's.
func fakeClock(f Fakes) ports.Clock {
	if f.Clock != nil {
		return f.Clock
	}
	return system.NewClock()
}
