// Package redistest gives tests the Redis server named by
// GATEHOUSE_TEST_REDIS_URL, and key prefixes of their own on it. It is
// imported by tests only.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/ratelimit"
)

// RedisEnv names the variable that enables the Redis suites, such as
// redis://127.0.0.1:6379/15 (a database of its own: tests leave keys there
// until they expire).
const RedisEnv = "GATEHOUSE_TEST_REDIS_URL"

// URL returns the URL of the test server, after checking that it answers.
// It skips the test under -short (make test-short, which asks for it), and
// when GATEHOUSE_TEST_REDIS_URL is unset, except under CI, where a Redis
// suite skipped for want of Redis is a failure.
func URL(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("Redis suite skipped under -short")
	}
	u := os.Getenv(RedisEnv)
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s must be set in CI: the Redis suites may not be skipped", RedisEnv)
		}
		t.Skipf("Redis suite skipped: set %s to run it", RedisEnv)
	}
	c, err := ratelimit.OpenRedis(u)
	if err != nil {
		t.Fatalf("%s: %v", RedisEnv, err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("%s (%s) does not answer: %v", RedisEnv, ratelimit.DescribeRedis(u), err)
	}
	return u
}

// Prefix returns a key prefix of the test's own, "gatehouse-test:HEX:",
// whose keys are deleted when the test ends.
func Prefix(t testing.TB, url string) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	prefix := "gatehouse-test:" + hex.EncodeToString(b[:]) + ":"
	t.Cleanup(func() {
		c, err := ratelimit.OpenRedis(url)
		if err != nil {
			return
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
	})
	return prefix
}
