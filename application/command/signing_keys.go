package command

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// SigningKeys creates, seals, rotates and publishes the key pairs Gatehouse
// signs tokens with, and signs and verifies those tokens. Keys are held in
// memory (an immutable snapshot swapped atomically); no request reads the
// database for them. The snapshot is reloaded by Refresh, which the service
// runs every minute, so a rotation on another instance is seen here too.
type SigningKeys struct {
	repo     ports.SigningKeyRepository
	jose     ports.JOSE
	ids      ports.IDGenerator
	clock    ports.Clock
	audit    auditor
	admins   domain.PlatformAdmins
	settings TokenSettings

	snap atomic.Pointer[keySnapshot]
	// loadMu serialises the writers of the snapshot (Ensure, Refresh,
	// Rotate and the reload on an unknown kid).
	loadMu sync.Mutex
	// lastMiss is when (Unix nanoseconds) Verify last reloaded for an
	// unknown kid: at most once every unknownKidReload.
	lastMiss atomic.Int64
}

// unknownKidReload bounds how often tokens naming an unknown kid make
// Verify reload the keys (another instance may just have rotated).
const unknownKidReload = 5 * time.Second

// NewSigningKeys returns the signing-key use cases.
func NewSigningKeys(repo ports.SigningKeyRepository, jose ports.JOSE, ids ports.IDGenerator, clock ports.Clock, audit ports.AuditLog,
	settings TokenSettings, admin AdminSettings) *SigningKeys {
	mustHave(repo, jose, ids, clock, audit)
	k := &SigningKeys{repo: repo, jose: jose, ids: ids, clock: clock, audit: auditor{audit, ids, clock}, admins: admin.Admins, settings: settings}
	k.snap.Store(&keySnapshot{published: map[domain.SigningKeyID]*loadedKey{}, signing: map[domain.SigningAlgorithm]*loadedKey{}, jwks: []byte(`{"keys":[]}`)})
	return k
}

// SigningKeyView is what administrators see of a key: never private parts.
type SigningKeyView struct {
	ID        domain.SigningKeyID
	Alg       domain.SigningAlgorithm
	CreatedAt time.Time
	RetiredAt time.Time
	// PublishedUntil is when a retired key leaves the key set (zero while
	// it signs).
	PublishedUntil time.Time
}

// publishedFor is how long a retired key stays in the key set: a token it
// signed just before retirement lives MaxTokenLifetime, and a client may
// have cached the key set without the new key for JWKSMaxAge.
func (k *SigningKeys) publishedFor() time.Duration {
	return k.settings.MaxTokenLifetime() + k.settings.JWKSMaxAge
}

func (k *SigningKeys) view(key domain.SigningKey) SigningKeyView {
	v := SigningKeyView{ID: key.ID, Alg: key.Alg, CreatedAt: key.CreatedAt, RetiredAt: key.RetiredAt}
	if !key.RetiredAt.IsZero() {
		v.PublishedUntil = key.RetiredAt.Add(k.publishedFor())
	}
	return v
}

// isPublished reports whether key belongs in the key set at now.
func (k *SigningKeys) isPublished(key domain.SigningKey, now time.Time) bool {
	return key.RetiredAt.IsZero() || now.Before(key.RetiredAt.Add(k.publishedFor()))
}

// newestFirst orders keys by creation, newest first, ties by id.
func newestFirst(a, b domain.SigningKey) int {
	return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
}

// Ensure loads the keys, creating a key for each algorithm that has none
// signing, and prunes keys no longer published. Run at start. An active key
// whose private half no configured secret opens (the secret was replaced
// without being kept in GATEHOUSE_SECRETS) is retired and replaced; its
// public key stays published, so its tokens still verify.
func (k *SigningKeys) Ensure(ctx context.Context) error {
	k.loadMu.Lock()
	defer k.loadMu.Unlock()
	keys, err := k.repo.List(ctx)
	if err != nil {
		return err
	}
	now := k.clock.Now()
	for _, alg := range domain.SigningAlgorithms {
		var active []domain.SigningKey
		for _, key := range keys {
			if key.Alg == alg && key.RetiredAt.IsZero() {
				active = append(active, key)
			}
		}
		slices.SortFunc(active, newestFirst)
		if slices.ContainsFunc(active, func(key domain.SigningKey) bool { _, err := k.jose.Open(key); return err == nil }) {
			continue
		}
		if _, err := k.create(ctx, alg, now); err != nil {
			return err
		}
		for _, key := range active {
			if err := k.repo.Retire(ctx, key.ID, now); err != nil {
				return err
			}
		}
	}
	err = k.refreshLocked(ctx)
	for _, alg := range domain.SigningAlgorithms {
		if k.snap.Load().signing[alg] == nil {
			return err
		}
	}
	// Every algorithm signs: a broken retired key, left out of the key set,
	// does not keep the service from starting (Refresh reports it).
	return nil
}

// create makes, stores and returns a new key of alg.
func (k *SigningKeys) create(ctx context.Context, alg domain.SigningAlgorithm, now time.Time) (domain.SigningKey, error) {
	key, err := k.jose.Generate(domain.SigningKeyID(k.ids.NewID()), alg)
	if err != nil {
		return domain.SigningKey{}, err
	}
	key.CreatedAt = now
	return key, k.repo.Create(ctx, key)
}

// Refresh deletes keys past their publication window and reloads the keys
// from storage. The service runs it every minute, well within JWKSMaxAge,
// so an instance that missed a rotation elsewhere stops signing with the
// retired key long before that key leaves the key set.
func (k *SigningKeys) Refresh(ctx context.Context) error {
	k.loadMu.Lock()
	defer k.loadMu.Unlock()
	return k.refreshLocked(ctx)
}

func (k *SigningKeys) refreshLocked(ctx context.Context) error {
	if _, err := k.repo.DeleteRetiredBefore(ctx, k.clock.Now().Add(-k.publishedFor())); err != nil {
		return err
	}
	return k.reloadLocked(ctx)
}

var errBadSigningAlg = domain.Invalid("request.invalid_alg", "Unknown signing algorithm",
	domain.FieldViolation{Location: "body.alg", Message: "must be EdDSA or RS256"})

// Rotate makes a new key for each algorithm in algs (all when empty) and
// retires the key it replaces. A nil Principal is the command line.
func (k *SigningKeys) Rotate(ctx context.Context, req KeyRequest, algs []domain.SigningAlgorithm) ([]SigningKeyView, error) {
	if err := k.authorizeAdmin(req.Principal); err != nil {
		return nil, k.audit.record(ctx, req.Actor, "admin.rotate-signing-key", target{Type: "signing_key"}, err)
	}
	if len(algs) == 0 {
		algs = domain.SigningAlgorithms
	}
	for _, alg := range algs {
		if !slices.Contains(domain.SigningAlgorithms, alg) {
			return nil, k.audit.record(ctx, req.Actor, "admin.rotate-signing-key", target{Type: "signing_key"}, errBadSigningAlg)
		}
	}
	k.loadMu.Lock()
	defer k.loadMu.Unlock()
	var out []SigningKeyView
	for _, alg := range slices.Compact(slices.Clone(algs)) {
		key, err := k.rotate(ctx, alg)
		if err := k.audit.record(ctx, req.Actor, "admin.rotate-signing-key", target{Type: "signing_key", ID: string(key.ID)}, err); err != nil {
			return nil, err
		}
		out = append(out, k.view(key))
	}
	// The new keys sign from now on, here; other instances follow at their
	// next Refresh, signing with the retired (still published) key until then.
	return out, k.reloadLocked(ctx)
}

// rotate creates a key of alg and retires every other active key of alg.
func (k *SigningKeys) rotate(ctx context.Context, alg domain.SigningAlgorithm) (domain.SigningKey, error) {
	keys, err := k.repo.List(ctx)
	if err != nil {
		return domain.SigningKey{}, err
	}
	now := k.clock.Now()
	key, err := k.create(ctx, alg, now)
	if err != nil {
		return key, err
	}
	for _, old := range keys {
		if old.Alg == alg && old.RetiredAt.IsZero() {
			if err := k.repo.Retire(ctx, old.ID, now); err != nil && !errors.Is(err, domain.ErrNotFound) {
				return key, err
			}
		}
	}
	return key, nil
}

// List returns every published key, newest first.
func (k *SigningKeys) List(ctx context.Context, req KeyRequest) ([]SigningKeyView, error) {
	if err := k.authorizeAdmin(req.Principal); err != nil {
		return nil, k.audit.record(ctx, req.Actor, "admin.list-signing-keys", target{Type: "signing_key"}, err)
	}
	keys, err := k.repo.List(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(keys, newestFirst)
	now := k.clock.Now()
	out := make([]SigningKeyView, 0, len(keys))
	for _, key := range keys {
		if k.isPublished(key, now) {
			out = append(out, k.view(key))
		}
	}
	return out, nil
}

// authorizeAdmin refuses actors other than platform administrators and the CLI.
func (k *SigningKeys) authorizeAdmin(p *Principal) error {
	if p != nil && !k.admins.IsAdmin(p.User) {
		return domain.ErrNotPlatformAdmin
	}
	return nil
}

// JWKS returns the published key set as JSON: public members only, each with
// kid, alg and use "sig".
func (k *SigningKeys) JWKS(ctx context.Context) ([]byte, error) { return k.snap.Load().jwks, nil }

// JWKSMaxAge is how long clients may cache the key set.
func (k *SigningKeys) JWKSMaxAge() time.Duration { return k.settings.JWKSMaxAge }

// jwksDocument is the key set: the stored public JWKs, newest first.
func jwksDocument(keys []domain.SigningKey) ([]byte, error) {
	set := struct {
		Keys []json.RawMessage `json:"keys"`
	}{Keys: make([]json.RawMessage, 0, len(keys))}
	for _, key := range keys {
		set.Keys = append(set.Keys, key.PublicJWK)
	}
	b, err := json.Marshal(set)
	if err != nil {
		return nil, domain.Internal("signing keys: key set", err)
	}
	return b, nil
}
