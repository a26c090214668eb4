package federation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/gatehouse/gatehouse/domain"
)

// How long a key set is trusted.
const (
	// keySetRefetchInterval is the least time between two fetches of a key
	// set: a token naming a key the set does not have makes the client
	// fetch it again (the provider may have rotated its keys), but a flood
	// of tokens with made-up key ids makes one fetch per interval, not one
	// each.
	keySetRefetchInterval = 5 * time.Second
	// keySetMaxAge is how long a key set is used before it is fetched
	// again, so a key the provider withdrew stops verifying; should the
	// provider then not answer, the old set serves on.
	keySetMaxAge = time.Hour
)

var joseAlgs = func() []jose.SignatureAlgorithm {
	out := make([]jose.SignatureAlgorithm, len(asymmetricAlgs))
	for i, a := range asymmetricAlgs {
		out[i] = jose.SignatureAlgorithm(a)
	}
	return out
}()

// errNoKey is the cause when no key of the set verifies a signature.
var errNoKey = errors.New("no key of the provider's key set verifies the signature")

var _ oidc.KeySet = (*keySet)(nil)

// keySet is a provider's JSON Web Key Set, cached. It implements
// oidc.KeySet for go-oidc's verifier, which checks the algorithm before it
// asks.
type keySet struct {
	c   *Client
	url string

	fetching sync.Mutex // one fetch at a time; the others wait for it

	mu       sync.RWMutex
	keys     []jose.JSONWebKey
	gen      uint64    // bumped by every fetch that succeeds; 0: never loaded
	loadedAt time.Time // the last fetch that succeeded
	triedAt  time.Time // the last fetch
	err      error     // the last fetch's failure
}

// fetchProbe carries a key set fetch's failure out of go-oidc's verifier
// (which keeps only the text of the key set's error), so that a provider
// whose keys cannot be read is told from a token that is not valid.
type fetchProbe struct{ err error }

type fetchProbeKey struct{}

// withFetchProbe returns ctx carrying a new probe.
func withFetchProbe(ctx context.Context) (context.Context, *fetchProbe) {
	p := &fetchProbe{}
	return context.WithValue(ctx, fetchProbeKey{}, p), p
}

// reportFetch records a fetch failure on ctx's probe.
func reportFetch(ctx context.Context, err error) {
	if p, ok := ctx.Value(fetchProbeKey{}).(*fetchProbe); ok {
		p.err = err
	}
}

// VerifySignature implements oidc.KeySet: it verifies the compact JWS raw
// with the key it names, fetching the set again when no cached key
// verifies it.
func (s *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(raw, joseAlgs)
	if err != nil {
		return nil, err
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("not exactly one signature")
	}
	keys, gen, err := s.current(ctx)
	if err != nil {
		reportFetch(ctx, err)
		return nil, err
	}
	if payload, ok := verifyWith(jws, keys); ok {
		return payload, nil
	}
	// OpenID Connect Core §10.1.1: a key the set does not have may be a
	// new one; the provider publishes it before it signs with it.
	keys, _, fresh, err := s.refetch(ctx, gen)
	if err != nil {
		reportFetch(ctx, err)
		return nil, err
	}
	if fresh {
		if payload, ok := verifyWith(jws, keys); ok {
			return payload, nil
		}
	}
	return nil, errNoKey
}

// verifyWith verifies jws with the first public signing key of keys its
// header names (every one when it names none).
func verifyWith(jws *jose.JSONWebSignature, keys []jose.JSONWebKey) ([]byte, bool) {
	h := jws.Signatures[0].Header
	for i := range keys {
		k := &keys[i]
		if !k.IsPublic() || k.Use == "enc" || (h.KeyID != "" && k.KeyID != h.KeyID) || (k.Algorithm != "" && k.Algorithm != h.Algorithm) {
			continue
		}
		if payload, err := jws.Verify(k); err == nil {
			return payload, true
		}
	}
	return nil, false
}

// current returns the cached keys and their generation, fetching them when
// there are none yet or they are older than keySetMaxAge (then the old ones
// serve if the fetch fails).
func (s *keySet) current(ctx context.Context) ([]jose.JSONWebKey, uint64, error) {
	s.mu.RLock()
	keys, gen, loadedAt := s.keys, s.gen, s.loadedAt
	s.mu.RUnlock()
	if gen != 0 && s.c.clock.Now().Sub(loadedAt) < keySetMaxAge {
		return keys, gen, nil
	}
	fetched, fetchedGen, fresh, err := s.refetch(ctx, gen)
	switch {
	case fresh:
		return fetched, fetchedGen, nil
	case gen != 0:
		return keys, gen, nil
	case err == nil:
		err = fail(domain.ErrUpstreamDiscovery, errors.New("key set: not loaded"))
	}
	return nil, 0, err
}

// refetch fetches the set again unless another request did since
// generation seen (then its keys are returned) or the last fetch is less
// than keySetRefetchInterval old. It returns the keys and their
// generation; fresh reports whether they are newer than generation seen;
// err is a fetch's failure (now, or within the interval when no set was
// ever loaded).
func (s *keySet) refetch(ctx context.Context, seen uint64) (keys []jose.JSONWebKey, gen uint64, fresh bool, err error) {
	s.fetching.Lock()
	defer s.fetching.Unlock()
	s.mu.RLock()
	keys, gen, triedAt, lastErr := s.keys, s.gen, s.triedAt, s.err
	s.mu.RUnlock()
	if gen != seen {
		return keys, gen, true, nil
	}
	now := s.c.clock.Now()
	if !triedAt.IsZero() && now.Sub(triedAt) < keySetRefetchInterval {
		if gen == 0 {
			return nil, 0, false, lastErr
		}
		return keys, gen, false, nil
	}
	fetched, err := s.fetch(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.triedAt = now
	if err != nil {
		s.err = err
		return keys, gen, false, err
	}
	s.keys, s.gen, s.loadedAt, s.err = fetched, s.gen+1, now, nil
	return fetched, s.gen, true, nil
}

// fetch reads the key set over HTTP. Keys this package cannot read (an
// unknown key type) are left out, as go-oidc does, rather than failing the
// whole set.
func (s *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	s.c.fetches.Add(1)
	req, err := get(s.url, "application/json", "")
	if err != nil {
		return nil, fail(domain.ErrUpstreamDiscovery, fmt.Errorf("key set: %w", err))
	}
	resp, err := s.c.send(ctx, req, domain.ErrUpstreamDiscovery, "key set")
	if err != nil {
		return nil, err
	}
	if !resp.ok() {
		return nil, fail(domain.ErrUpstreamDiscovery, fmt.Errorf("key set: status %d", resp.status))
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(resp.body, &set); err != nil {
		return nil, fail(domain.ErrUpstreamDiscovery, fmt.Errorf("key set: not a JSON Web Key Set: %v", err))
	}
	keys := make([]jose.JSONWebKey, 0, len(set.Keys))
	for _, raw := range set.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err == nil {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, fail(domain.ErrUpstreamDiscovery, errors.New("key set: no key"))
	}
	return keys, nil
}
