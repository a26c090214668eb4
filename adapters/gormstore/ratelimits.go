package gormstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.RateLimiter = (*RateLimiter)(nil)

// maxRateLimitKeyBytes is the longest key kept as it is; longer keys, and
// keys PostgreSQL text cannot hold (NUL bytes, invalid UTF-8), are kept as
// their SHA-256.
const maxRateLimitKeyBytes = 256

// rateLimitHitSQL counts one hit in one statement, on the primary key: it
// creates the window, counts in it, or starts it again when it has ended,
// and returns the count and the milliseconds left. The row lock of the
// upsert serialises concurrent hits on a key, and the time is the
// database's (now(), the statement's start), the one clock every replica
// shares. The count stops at the cap (limit + 1): past the limit only "over"
// matters, and an integer must not overflow.
const rateLimitHitSQL = `INSERT INTO rate_limits AS r (key, hits, expires_at)
VALUES (?, 1, now() + ?::double precision * interval '1 millisecond')
ON CONFLICT (key) DO UPDATE SET
	hits = CASE WHEN r.expires_at <= now() THEN 1 ELSE LEAST(r.hits + 1, ?::integer) END,
	expires_at = CASE WHEN r.expires_at <= now() THEN excluded.expires_at ELSE r.expires_at END
RETURNING hits, ceil(extract(epoch FROM expires_at - now()) * 1000)::bigint AS left_ms`

// RateLimiter is a RateLimiter whose windows are rows of PostgreSQL's
// rate_limits table, so every replica on the same database counts together
// without Redis. Each hit is one upsert (rateLimitHitSQL) of the row
// WINDOW_MS + ":k:" + KEY, or ":h:" + the SHA-256 of KEY in hex for long or
// odd keys; the window is part of the key, so a key used with another window
// counts afresh. Retry-After is the time left in the window, rounded up to
// whole seconds, at least one and at most the window rounded up.
//
// A hit is bounded like every statement (the database timeout): a database
// that slow fails the request's own queries too. It needs PostgreSQL:
// SQLite is one process, which counts in memory. DeleteExpired removes
// ended windows; the purge job calls it.
type RateLimiter struct {
	db *gorm.DB
}

// NewRateLimiter returns a RateLimiter on db, which must be PostgreSQL.
func NewRateLimiter(db *gorm.DB) (*RateLimiter, error) {
	if DialectOf(db) != DialectPostgres {
		return nil, errors.New("gormstore: the rate limiter needs PostgreSQL")
	}
	return &RateLimiter{db: db}, nil
}

type rateLimitHit struct {
	Hits   int
	LeftMs int64
}

// Allow implements ports.RateLimiter.
func (r *RateLimiter) Allow(ctx context.Context, key string, limit int, window time.Duration) (bool, time.Duration, error) {
	if limit < 1 || window <= 0 {
		return false, 0, fmt.Errorf("gormstore: rate limit %d and window %v must be positive", limit, window)
	}
	ms := int64(max(1, (window+time.Millisecond-1)/time.Millisecond))
	var hit rateLimitHit
	if err := r.db.WithContext(ctx).Raw(rateLimitHitSQL, rateLimitKey(key, ms), ms, min(limit, maxHits-1)+1).Scan(&hit).Error; err != nil {
		return false, 0, convertErr("rate_limits.hit", err, nil, nil)
	}
	if hit.Hits <= limit {
		return true, 0, nil
	}
	return false, wholeSecondsWithin(time.Duration(hit.LeftMs)*time.Millisecond, window), nil
}

// maxHits is the largest count the integer column holds.
const maxHits = 1<<31 - 1

// DeleteExpired deletes the windows that have ended, by the database's
// clock, and returns how many.
func (r *RateLimiter) DeleteExpired(ctx context.Context) (int, error) {
	res := r.db.WithContext(ctx).Exec(`DELETE FROM rate_limits WHERE expires_at <= now()`)
	if res.Error != nil {
		return 0, convertErr("rate_limits.delete_expired", res.Error, nil, nil)
	}
	return int(res.RowsAffected), nil
}

// rateLimitKey returns the row key of key's window of ms milliseconds.
func rateLimitKey(key string, ms int64) string {
	head := strconv.FormatInt(ms, 10)
	if len(key) > maxRateLimitKeyBytes || !utf8.ValidString(key) || strings.IndexByte(key, 0) >= 0 {
		sum := sha256.Sum256([]byte(key))
		return head + ":h:" + hex.EncodeToString(sum[:])
	}
	return head + ":k:" + key
}

// wholeSecondsWithin rounds left up to whole seconds, within [1s, window
// rounded up].
func wholeSecondsWithin(left, window time.Duration) time.Duration {
	ceil := func(d time.Duration) time.Duration {
		return (d + time.Second - 1) / time.Second * time.Second
	}
	return min(max(ceil(left), time.Second), max(ceil(window), time.Second))
}
