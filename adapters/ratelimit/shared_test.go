package ratelimit_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/ratelimit"
	"github.com/gatehouse/gatehouse/adapters/ratelimit/redistest"
	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/ports/conformance"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// storeTimeout is the deadline of a hit on the store in the tests of its
// answers. The default (DefaultStoreTimeout) is tight on purpose, and a
// loaded machine running the whole suite can miss it on a first dial; the
// hit would then count in memory and the replicas apart, which is the
// breaker's behaviour, tested with a fake store in breaker_test.go, not the
// store's.
const storeTimeout = 10 * time.Second

// newShared returns a Shared over store, closed when the test ends.
func newShared(t testing.TB, store ports.RateLimiter, logger *slog.Logger, opts ...ratelimit.Option) *ratelimit.Shared {
	t.Helper()
	s := ratelimit.NewShared(store, "test store", logger, ratelimit.SharedOptions{Timeout: storeTimeout}, opts...)
	t.Cleanup(s.Close)
	return s
}

// The closed keys follow the suite's clock, over a store that does too.
func TestShared_contract(t *testing.T) {
	t.Parallel()
	conformance.RunRateLimiter(t, func(t *testing.T, now func() time.Time) ports.RateLimiter {
		return newShared(t, newMemory(t, ratelimit.WithClock(now)), discard, ratelimit.WithClock(now))
	})
}

func TestShared_contract_redis(t *testing.T) {
	t.Parallel()
	url := redistest.URL(t)
	prefix := redistest.Prefix(t, url)
	conformance.RunSharedRateLimiter(t, func(t *testing.T) ports.RateLimiter {
		return newShared(t, ratelimit.NewRedis(mustRedisClient(t, url), prefix), discard)
	})
}

// Ensure a key the store refused is refused here without asking the store
// again, and stays refused on the other replicas, which ask the store.
func TestShared_closed_keys_spare_the_store(t *testing.T) {
	t.Parallel()
	url := redistest.URL(t)
	prefix := redistest.Prefix(t, url)
	c := mustRedisClient(t, url)
	one := newShared(t, ratelimit.NewRedis(c, prefix), discard)
	other := newShared(t, ratelimit.NewRedis(mustRedisClient(t, url), prefix), discard)
	for range 3 {
		mustAllowed(t, one, "k", true)
	}
	for range 50 {
		mustAllowed(t, one, "k", false)
	}
	if got := c.Get(context.Background(), prefix+"rl:60000:k:k").Val(); got != "4" {
		t.Fatalf("count in Redis = %q after 3 allowed and 51 refused hits on one replica, want 4", got)
	}
	mustAllowed(t, other, "k", false)
	mustAllowed(t, other, "k", false)
	if got := c.Get(context.Background(), prefix+"rl:60000:k:k").Val(); got != "5" {
		t.Fatalf("count in Redis = %q after the other replica's refusals, want 5 (it asked once)", got)
	}
}

// Ensure that while the store fails, each replica counts in its memory and
// holds the limit alone (neither unlimited nor closed), that the failure is
// logged once, not per hit, and that the store counts again once it
// answers (the breaker's next probe, after its cooldown on the test's
// clock).
func TestShared_counts_in_memory_while_the_store_fails(t *testing.T) {
	t.Parallel()
	url := redistest.URL(t)
	prefix := redistest.Prefix(t, url)
	opt, err := ratelimit.ParseRedisURL(url)
	if err != nil {
		t.Fatal(err)
	}
	proxy := startProxy(t, opt.Addr)
	viaProxy := strings.Replace(url, opt.Addr, proxy.addr(), 1)
	logs, clock := &syncBuffer{}, newClock()
	s := newShared(t, ratelimit.NewRedis(mustRedisClient(t, viaProxy), prefix),
		slog.New(slog.NewJSONHandler(logs, nil)), ratelimit.WithClock(clock.Now))

	mustAllowed(t, s, "k", true)
	mustAllowed(t, s, "k", true)

	proxy.setCut(true)
	for range 3 {
		mustAllowed(t, s, "k", true)
	}
	mustAllowed(t, s, "k", false)
	if got := s.Failures(); got != 4 {
		t.Fatalf("Failures() = %d after 4 hits on a cut store, want 4", got)
	}
	if n := strings.Count(logs.String(), "the shared store failed"); n != 1 {
		t.Fatalf("the failure was logged %d times, want once; logs:\n%s", n, logs)
	}

	proxy.setCut(false)
	deadline := time.Now().Add(10 * time.Second)
	for before := s.Failures(); ; before = s.Failures() {
		clock.Advance(ratelimit.DefaultStoreCooldown) // the breaker asks the store again
		mustAllowed(t, s, "probe", true)
		if s.Failures() == before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the store did not answer again within 10s of the proxy coming back")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The store still holds the two hits from before the cut.
	mustAllowed(t, s, "k", true)
	mustAllowed(t, s, "k", false)
	if !strings.Contains(logs.String(), "the shared store answers again") {
		t.Fatalf("the return was not logged; logs:\n%s", logs)
	}
}

func TestShared_invalid_arguments(t *testing.T) {
	t.Parallel()
	s := newShared(t, newMemory(t), discard)
	for _, tt := range []struct {
		limit  int
		window time.Duration
	}{{0, time.Minute}, {3, 0}, {-1, time.Minute}} {
		if _, _, err := s.Allow(context.Background(), "k", tt.limit, tt.window); err == nil {
			t.Errorf("Allow(limit %d, window %v): no error", tt.limit, tt.window)
		}
	}
	if s.Failures() != 0 {
		t.Fatalf("invalid arguments counted as store failures: %d", s.Failures())
	}
}

func mustAllowed(t *testing.T, rl ports.RateLimiter, key string, want bool) {
	t.Helper()
	ok, retry, err := rl.Allow(context.Background(), key, 3, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if ok != want {
		t.Fatalf("Allow(%q) = %v (retryAfter %v), want %v", key, ok, retry, want)
	}
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// proxy forwards TCP connections to a server until it is cut: then it
// closes the connections it holds and every new one at once, as a server
// that went away would.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]struct{}
}

func startProxy(t testing.TB, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { _ = ln.Close(); p.setCut(true) })
	go p.serve()
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			_ = in.Close()
			continue
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		p.mu.Lock()
		p.conns[in], p.conns[out] = struct{}{}, struct{}{}
		p.mu.Unlock()
		go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
		go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
	}
}

func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			_ = c.Close()
		}
		clear(p.conns)
	}
}

// syncBuffer collects log lines written from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
