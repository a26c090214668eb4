package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.RateLimiter = (*Redis)(nil)

// The bounds of OpenRedis's clients. A hit is one short script on a server
// that answers in well under a millisecond; past these it is a failure,
// which Shared counts in process memory instead of holding the request.
const (
	redisDialTimeout = time.Second            // connecting, TLS and the handshake
	redisIOTimeout   = 500 * time.Millisecond // each read and each write
	redisPoolTimeout = 500 * time.Millisecond // waiting for a pooled connection
)

// DefaultRedisPrefix starts every key Gatehouse keeps in Redis.
const DefaultRedisPrefix = "gatehouse:"

// windowScript counts one hit in a fixed window, atomically and in one round
// trip: the first hit of a window creates the counter and gives it the
// window as its time to live, so Redis ends the window (and frees its key)
// on its own clock, the one clock every replica shares. It returns the
// count, refused hits included, and the milliseconds left in the window.
// A counter found without a time to live (a script cut short by an error:
// Redis does not roll scripts back) gets one, so no key is closed forever.
const windowScript = `
local count = redis.call('INCR', KEYS[1])
local left = tonumber(ARGV[1])
if count == 1 then
	redis.call('PEXPIRE', KEYS[1], left)
else
	left = redis.call('PTTL', KEYS[1])
	if left < 0 then
		left = tonumber(ARGV[1])
		redis.call('PEXPIRE', KEYS[1], left)
	end
end
return {count, left}
`

// windowHit is sent by its SHA-1 (EVALSHA), and whole (EVAL, which makes the
// server keep it) only when the server does not know it: the first time,
// and after a restart or a SCRIPT FLUSH.
var windowHit = redis.NewScript(windowScript)

// Redis is a RateLimiter whose windows live in Redis, so every replica that
// uses the same Redis (and key prefix) counts together. Each hit is one
// script (see windowScript) on the key PREFIX + "rl:" + WINDOW_MS + ":k:" +
// KEY, or ":h:" + the SHA-256 of KEY in hex when KEY is longer than
// MaxKeyBytes. The window is part of the key, so a key used with another
// window counts afresh. Retry-After comes from the key's time to live,
// rounded up to whole seconds as Memory rounds it.
//
// Allow returns an error when Redis does not answer within the client's
// timeouts (see OpenRedis) or answers with an error; wrap a Redis in a
// Shared to count in memory then.
type Redis struct {
	client *redis.Client
	prefix string
}

// NewRedis returns a Redis limiter over client, its keys under prefix
// (DefaultRedisPrefix if empty).
func NewRedis(client *redis.Client, prefix string) *Redis {
	if prefix == "" {
		prefix = DefaultRedisPrefix
	}
	return &Redis{client: client, prefix: prefix + "rl:"}
}

// Allow implements ports.RateLimiter.
func (r *Redis) Allow(ctx context.Context, key string, limit int, length time.Duration) (bool, time.Duration, error) {
	if limit < 1 || length <= 0 {
		return false, 0, fmt.Errorf("ratelimit: limit %d and window %v must be positive", limit, length)
	}
	ms := max(1, (length+time.Millisecond-1)/time.Millisecond)
	res, err := windowHit.Run(ctx, r.client, []string{r.key(key, int64(ms))}, int64(ms)).Int64Slice()
	if err != nil {
		return false, 0, fmt.Errorf("ratelimit: redis: %w", err)
	}
	if len(res) != 2 {
		return false, 0, fmt.Errorf("ratelimit: redis: the window script answered %d values, want 2", len(res))
	}
	if res[0] <= int64(limit) {
		return true, 0, nil
	}
	return false, retryAfter(time.Duration(res[1])*time.Millisecond, length), nil
}

// key returns the Redis key of key's window of ms milliseconds.
func (r *Redis) key(key string, ms int64) string {
	head := r.prefix + strconv.FormatInt(ms, 10)
	if len(key) > MaxKeyBytes {
		sum := sha256.Sum256([]byte(key))
		return head + ":h:" + hex.EncodeToString(sum[:])
	}
	return head + ":k:" + key
}

// OpenRedis returns a client for rawURL (see ParseRedisURL) whose calls are
// bounded: waiting for a pooled connection and each read and write give up
// after 500 ms, dialling after 1 s; a failed call is not retried, and a dial
// is tried once (the pool stops dialling a server that keeps refusing).
// Options set in the URL's query (dial_timeout=…) win. It does not
// connect; call Ping to check.
func OpenRedis(rawURL string) (*redis.Client, error) {
	opt, err := ParseRedisURL(rawURL)
	if err != nil {
		return nil, err
	}
	if opt.DialTimeout == 0 {
		opt.DialTimeout = redisDialTimeout
	}
	if opt.ReadTimeout == 0 {
		opt.ReadTimeout = redisIOTimeout
	}
	if opt.WriteTimeout == 0 {
		opt.WriteTimeout = redisIOTimeout
	}
	if opt.PoolTimeout == 0 {
		opt.PoolTimeout = redisPoolTimeout
	}
	if opt.MaxRetries == 0 {
		// A retry after a lost answer would count the hit twice.
		opt.MaxRetries = -1
	}
	opt.DialerRetries = 1
	opt.ContextTimeoutEnabled = true
	quietRedis.Do(func() { redis.SetLogger(quietLogger{}) })
	return redis.NewClient(opt), nil
}

// quietRedis silences go-redis's own logger (standard error, a line per
// failed dial): Shared logs a failing store once, then once a minute.
var quietRedis sync.Once

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// ParseRedisURL checks a Redis URL: redis://[USER:PASSWORD@]HOST[:PORT][/DB]
// or rediss://… for TLS. Its error never repeats the URL, which may hold a
// password.
func ParseRedisURL(rawURL string) (*redis.Options, error) {
	errForm := errors.New("must be redis://[USER:PASSWORD@]HOST[:PORT][/DB], or rediss://… for TLS")
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Hostname() == "" {
		return nil, errForm
	}
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, errForm
	}
	return opt, nil
}

// DescribeRedis names the server of a Redis URL for start-up lines and
// logs, "redis://HOST:PORT/DB" (rediss for TLS), never with a password.
func DescribeRedis(rawURL string) string {
	opt, err := ParseRedisURL(rawURL)
	if err != nil {
		return "Redis (malformed URL)"
	}
	scheme := "redis"
	if opt.TLSConfig != nil {
		scheme = "rediss"
	}
	return fmt.Sprintf("%s://%s/%d", scheme, opt.Addr, opt.DB)
}
