package system

import (
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/ports"
)

var (
	_ ports.Clock       = Clock{}
	_ ports.IDGenerator = IDGenerator{}
)

// Clock is the wall clock in UTC at microsecond precision, the precision that
// SQLite and PostgreSQL both keep.
type Clock struct{}

// NewClock returns the wall clock.
func NewClock() Clock { return Clock{} }

// Now implements ports.Clock.
func (Clock) Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// IDGenerator creates UUIDv7 identifiers: 74 random bits from crypto/rand
// after a millisecond timestamp, so new rows land at the end of an index.
type IDGenerator struct{}

// NewIDGenerator returns an IDGenerator.
func NewIDGenerator() IDGenerator { return IDGenerator{} }

// NewID implements ports.IDGenerator.
func (IDGenerator) NewID() string { return uuid.Must(uuid.NewV7()).String() }
