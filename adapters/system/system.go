package system

import (
	"crypto/rand"
	"time"

	"github.com/google/uuid"

	"github.com/gatehouse/gatehouse/ports"
)

var (
	_ ports.Clock          = Clock{}
	_ ports.IDGenerator    = IDGenerator{}
	_ ports.TokenGenerator = TokenGenerator{}
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

// TokenGenerator draws bearer secrets from crypto/rand.
type TokenGenerator struct{}

// NewTokenGenerator returns a TokenGenerator.
func NewTokenGenerator() TokenGenerator { return TokenGenerator{} }

const (
	tokenLength   = 32
	tokenAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	// tokenByteLimit is the largest multiple of len(tokenAlphabet) that fits
	// in a byte (4 × 62 = 248). Bytes at or above it are thrown away: taking
	// every byte modulo 62 would make the first 8 characters 25% likelier
	// than the rest.
	tokenByteLimit = 256 - 256%len(tokenAlphabet)
)

// NewToken implements ports.TokenGenerator. Each character carries log2(62)
// ≈ 5.95 bits, so a token holds about 190 bits.
func (g TokenGenerator) NewToken() string { return g.NewSecret(tokenLength) }

// NewSecret implements ports.TokenGenerator.
func (TokenGenerator) NewSecret(n int) string {
	out := make([]byte, 0, n)
	// 3% of bytes are rejected; a buffer a little larger than the secret
	// almost always suffices in one read.
	buf := make([]byte, n+n/4+1)
	for len(out) < n {
		_, _ = rand.Read(buf) // crypto/rand.Read never fails; it crashes the program instead.
		for _, b := range buf {
			if int(b) >= tokenByteLimit {
				continue
			}
			out = append(out, tokenAlphabet[int(b)%len(tokenAlphabet)])
			if len(out) == n {
				break
			}
		}
	}
	return string(out)
}
