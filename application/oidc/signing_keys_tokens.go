package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// keySnapshot is the keys as loaded at one moment; it is never modified
// once stored, so requests read it without locks.
type keySnapshot struct {
	// signers are, for each algorithm, the keys that opened and sign now
	// or will (not retired at load time), latest activation first.
	signers map[domain.SigningAlgorithm][]*loadedKey
	// published is every key in the key set, by kid.
	published map[domain.SigningKeyID]*loadedKey
	jwks      []byte
}

type loadedKey struct {
	key      domain.SigningKey
	verifier ports.JWSVerifier
	signer   ports.JWSSigner // nil unless the key signs
}

// signer returns the key of alg to sign with at now: the one with the
// latest activation that has activated and is not retired. Deciding here,
// not at load, lets every instance switch to a rotated key at its
// activation time without a reload.
func (s *keySnapshot) signer(alg domain.SigningAlgorithm, now time.Time) *loadedKey {
	for _, lk := range s.signers[alg] {
		if lk.key.SignsAt(now) {
			return lk
		}
	}
	return nil
}

// reloadLocked reads the keys and stores a new snapshot, reusing the parsed
// and opened keys of the previous one. The caller holds loadMu.
func (k *SigningKeys) reloadLocked(ctx context.Context) error {
	keys, err := k.repo.List(ctx)
	if err != nil {
		return err
	}
	slices.SortFunc(keys, latestActivationFirst)
	prev, now := k.snap.Load(), k.clock.Now()
	next := &keySnapshot{published: map[domain.SigningKeyID]*loadedKey{}, signers: map[domain.SigningAlgorithm][]*loadedKey{}}
	var inSet []domain.SigningKey
	var errs []error
	for _, key := range keys {
		if !k.isPublished(key, now) {
			continue
		}
		lk := &loadedKey{key: key}
		if old := prev.published[key.ID]; old != nil {
			lk.verifier, lk.signer = old.verifier, old.signer
		} else if lk.verifier, err = k.jose.Public(key); err != nil {
			errs = append(errs, err) // a broken key is left out of the set
			continue
		}
		if key.RetiredAt.IsZero() || key.RetiredAt.After(now) {
			if lk.signer == nil {
				signer, err := k.jose.Open(key)
				if err != nil {
					errs = append(errs, err) // an older active key may sign instead
				}
				lk.signer = signer
			}
			if lk.signer != nil {
				next.signers[key.Alg] = append(next.signers[key.Alg], lk)
			}
		}
		next.published[key.ID] = lk
		inSet = append(inSet, key)
	}
	// The key set lists the newest keys first, pending ones included.
	slices.SortStableFunc(inSet, newestFirst)
	if next.jwks, err = jwksDocument(inSet); err != nil {
		return err
	}
	k.snap.Store(next)
	for _, alg := range domain.SigningAlgorithms {
		if next.signer(alg, now) == nil {
			errs = append(errs, domain.Internal("signing keys", fmt.Errorf("no %s key signs (run Ensure)", alg)))
		}
	}
	return errors.Join(errs...)
}

// Sign signs claims with the key of alg that signs now (the latest
// activated); typ is the "typ" header ("JWT", "at+jwt"). The header
// carries the key's kid.
func (k *SigningKeys) Sign(ctx context.Context, alg domain.SigningAlgorithm, typ string, claims map[string]any) (string, error) {
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", domain.Internal("signing keys: claims", err)
	}
	return k.signPayload(alg, typ, payload)
}

// signPayload signs a JSON payload with the key of alg that signs now.
func (k *SigningKeys) signPayload(alg domain.SigningAlgorithm, typ string, payload []byte) (string, error) {
	lk := k.snap.Load().signer(alg, k.clock.Now())
	if lk == nil {
		return "", domain.Internal("signing keys", fmt.Errorf("no %s key signs", alg))
	}
	return lk.signer.Sign(typ, payload)
}

// VerifyOptions say what a token must be to pass Verify.
type VerifyOptions struct {
	// Alg is the one accepted algorithm; anything else (none included) fails.
	Alg domain.SigningAlgorithm
	// Type, when set, is the required "typ" header, such as "at+jwt".
	Type string
	// Issuer, when set, must equal iss exactly.
	Issuer string
	// Audience, when set, must be one of aud.
	Audience string
	// IgnoreExpiry accepts an expired token (end-session's id_token_hint).
	IgnoreExpiry bool
}

// errTokenInvalid is every verification failure. Which check failed is not
// told: it would help nobody but someone forging tokens.
var errTokenInvalid = domain.NewError(domain.KindUnauthenticated, "token.invalid", "The token is invalid or expired")

// clockLeeway is the clock skew tolerated on exp, nbf and iat.
const clockLeeway = 30 * time.Second

// Verify checks token's signature against a published key named by its kid,
// its algorithm, type, issuer, audience, exp and nbf (with 30 s of leeway),
// and returns its claims. Every failure is domain.KindUnauthenticated.
func (k *SigningKeys) Verify(ctx context.Context, token string, opt VerifyOptions) (map[string]any, error) {
	if !slices.Contains(domain.SigningAlgorithms, opt.Alg) {
		return nil, errTokenInvalid
	}
	h, err := k.jose.Header(token, opt.Alg)
	if err != nil || (opt.Type != "" && !sameMediaType(h.Type, opt.Type)) {
		return nil, errTokenInvalid
	}
	lk := k.snap.Load().published[h.KeyID]
	if lk == nil && k.reloadForUnknownKid(ctx) {
		lk = k.snap.Load().published[h.KeyID]
	}
	if lk == nil || lk.key.Alg != opt.Alg {
		return nil, errTokenInvalid
	}
	payload, err := lk.verifier.Verify(token)
	if err != nil {
		return nil, errTokenInvalid
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil || claims == nil {
		return nil, errTokenInvalid
	}
	if !k.claimsHold(claims, opt) {
		return nil, errTokenInvalid
	}
	return claims, nil
}

// reloadForUnknownKid reloads the keys when the last such reload is older
// than unknownKidReload, and reports whether it did.
func (k *SigningKeys) reloadForUnknownKid(ctx context.Context) bool {
	now := k.clock.Now().UnixNano()
	last := k.lastMiss.Load()
	if now-last < int64(unknownKidReload) || !k.lastMiss.CompareAndSwap(last, now) {
		return false
	}
	k.loadMu.Lock()
	defer k.loadMu.Unlock()
	_ = k.reloadLocked(ctx) // what did load is in the snapshot; Refresh reports the rest
	return true
}

// claimsHold checks the registered claims against opt at the clock's now.
func (k *SigningKeys) claimsHold(c map[string]any, opt VerifyOptions) bool {
	now := float64(k.clock.Now().Unix())
	leeway := clockLeeway.Seconds()
	if exp, ok := numericDate(c, "exp"); !ok || (!opt.IgnoreExpiry && (exp == nil || now >= *exp+leeway)) {
		return false
	}
	if nbf, ok := numericDate(c, "nbf"); !ok || (nbf != nil && now+leeway < *nbf) {
		return false
	}
	if iat, ok := numericDate(c, "iat"); !ok || (iat != nil && now+leeway < *iat) {
		return false
	}
	if opt.Issuer != "" {
		if iss, _ := c["iss"].(string); iss != opt.Issuer {
			return false
		}
	}
	if opt.Audience != "" {
		switch aud := c["aud"].(type) {
		case string:
			return aud == opt.Audience
		case []any:
			return slices.Contains(aud, any(opt.Audience))
		default:
			return false
		}
	}
	return true
}

// numericDate reads claim name: nil when absent, and ok false when present
// but not a finite number.
func numericDate(c map[string]any, name string) (*float64, bool) {
	v, present := c[name]
	if !present {
		return nil, true
	}
	f, isNum := v.(float64)
	if !isNum || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false
	}
	return &f, true
}

// sameMediaType compares "typ" values as RFC 7515 §4.1.9 says: case
// insensitively, with "application/" optional.
func sameMediaType(got, want string) bool {
	trim := func(s string) string {
		s = strings.ToLower(s)
		return strings.TrimPrefix(s, "application/")
	}
	return got != "" && trim(got) == trim(want)
}
