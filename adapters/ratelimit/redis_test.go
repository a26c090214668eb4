package ratelimit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gatehouse/gatehouse/adapters/ratelimit"
	"github.com/gatehouse/gatehouse/adapters/ratelimit/redistest"
	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/ports/conformance"
)

// mustRedisClient returns a new client of url, closed when the test ends.
func mustRedisClient(t testing.TB, url string) *redis.Client {
	t.Helper()
	c, err := ratelimit.OpenRedis(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestRedis_contract(t *testing.T) {
	t.Parallel()
	url := redistest.URL(t)
	prefix := redistest.Prefix(t, url)
	conformance.RunSharedRateLimiter(t, func(t *testing.T) ports.RateLimiter {
		return ratelimit.NewRedis(mustRedisClient(t, url), prefix)
	})
}

// Ensure keys live under the prefix, name their window, expire with it,
// and hold a long key only as its digest.
func TestRedis_keys(t *testing.T) {
	t.Parallel()
	url := redistest.URL(t)
	prefix := redistest.Prefix(t, url)
	c := mustRedisClient(t, url)
	rl := ratelimit.NewRedis(c, prefix)
	ctx := context.Background()
	long := "credentials|" + strings.Repeat("secret-looking-", 40)
	for _, k := range []string{"credentials|192.0.2.1", long} {
		if _, _, err := rl.Allow(ctx, k, 3, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	short := prefix + "rl:60000:k:credentials|192.0.2.1"
	var digest string
	for _, k := range keys {
		if strings.HasPrefix(k, prefix+"rl:60000:h:") {
			digest = k
		}
		if strings.Contains(k, "secret-looking") {
			t.Errorf("key %q holds the long key as it is", k)
		}
	}
	if len(keys) != 2 || digest == "" || len(digest) != len(prefix+"rl:60000:h:")+64 {
		t.Fatalf("keys = %q, want %q and one digest of 64 hex digits", keys, short)
	}
	for _, k := range []string{short, digest} {
		ttl, err := c.PTTL(ctx, k).Result()
		if err != nil || ttl <= 0 || ttl > time.Minute {
			t.Errorf("PTTL(%q) = %v, %v; want within (0, 1m]", k, ttl, err)
		}
	}
}

// Ensure a server that lost the script (a restart, SCRIPT FLUSH) is sent it
// again, and a counter found without a time to live gets one.
func TestRedis_recovers_lost_script_and_ttl(t *testing.T) {
	t.Parallel()
	url := redistest.URL(t)
	prefix := redistest.Prefix(t, url)
	c := mustRedisClient(t, url)
	rl := ratelimit.NewRedis(c, prefix)
	ctx := context.Background()
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := rl.Allow(ctx, "k", 2, time.Minute); err != nil || !ok {
		t.Fatalf("Allow after SCRIPT FLUSH = %v, %v; want allowed", ok, err)
	}
	key := prefix + "rl:60000:k:k"
	if err := c.Persist(ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := rl.Allow(ctx, "k", 2, time.Minute); err != nil || !ok {
		t.Fatalf("second Allow = %v, %v; want allowed", ok, err)
	}
	if ttl := c.PTTL(ctx, key).Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("PTTL after a hit on a key without one = %v, want within (0, 1m]", ttl)
	}
	if ok, retry, err := rl.Allow(ctx, "k", 2, time.Minute); err != nil || ok || retry < time.Second || retry > time.Minute {
		t.Fatalf("third Allow = %v, %v, %v; want refused within [1s, 1m]", ok, retry, err)
	}
}

// Ensure a Redis that does not answer is an error, within the bound, not a
// hung request.
func TestRedis_unreachable_is_an_error(t *testing.T) {
	t.Parallel()
	rl := ratelimit.NewRedis(mustRedisClient(t, "redis://"+closedAddr(t)+"/0"), "")
	if _, _, err := rl.Allow(context.Background(), "k", 3, time.Minute); err == nil {
		t.Fatal("Allow on a closed port: no error")
	}
}

func TestParseRedisURL(t *testing.T) {
	t.Parallel()
	valid := []string{"redis://127.0.0.1:6379/15", "redis://redis", "rediss://user:pw@cache.example.com:6380/2", "redis://:pw@[::1]:6379"}
	for _, u := range valid {
		if _, err := ratelimit.ParseRedisURL(u); err != nil {
			t.Errorf("ParseRedisURL(%q): %v", u, err)
		}
	}
	invalid := []string{"", "127.0.0.1:6379", "http://127.0.0.1:6379", "redis://", "redis://:hunter2@host/notanumber", "redis://:hunter2@host/1/2", "unix:///tmp/redis.sock", "redis://:hunter2@host:port"}
	for _, u := range invalid {
		_, err := ratelimit.ParseRedisURL(u)
		if err == nil {
			t.Errorf("ParseRedisURL(%q): no error", u)
		} else if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("ParseRedisURL(%q) error %q shows the password", u, err)
		}
	}
}

func TestDescribeRedis(t *testing.T) {
	t.Parallel()
	tests := []struct{ url, want string }{
		{"redis://:hunter2@127.0.0.1:6379/15", "redis://127.0.0.1:6379/15"},
		{"rediss://user:hunter2@cache.example.com", "rediss://cache.example.com:6379/0"},
		{"nonsense", "Redis (malformed URL)"},
	}
	for _, tt := range tests {
		if got := ratelimit.DescribeRedis(tt.url); got != tt.want {
			t.Errorf("DescribeRedis(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}
