package oidc

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// SigningKeys creates, seals, rotates and publishes the key pairs Gatehouse
// signs tokens with, and signs and verifies those tokens. Keys are held in
// memory (an immutable snapshot swapped atomically); no request reads the
// database for them. The snapshot is reloaded by Refresh, which the service
// runs every KeyReloadInterval, so a rotation on another instance is seen
// here too. A rotated key is published at once but signs only from its
// activation time, when every instance publishes it (Keycloak's passive
// keys): which key signs is decided at signing time, so the switch needs
// no reload.
type SigningKeys struct {
	repo     ports.SigningKeyRepository
	jose     ports.JOSE
	ids      ports.IDGenerator
	clock    ports.Clock
	audit    usecase.Auditor
	admins   domain.PlatformAdmins
	settings usecase.TokenSettings

	snap atomic.Pointer[keySnapshot]
	// loadMu serialises the writers of the snapshot (Ensure, Refresh,
	// Rotate and the reload on an unknown kid).
	loadMu sync.Mutex
	// lastMiss is when (Unix nanoseconds) Verify last reloaded for an
	// unknown kid: at most once every unknownKidReload.
	lastMiss atomic.Int64
	// frameworkTokens are the framework tokens get-session hands out again
	// (SessionFrameworkToken).
	frameworkTokens *frameworkTokenCache
}

// unknownKidReload bounds how often tokens naming an unknown kid make
// Verify reload the keys (another instance may just have rotated).
const unknownKidReload = 5 * time.Second

// NewSigningKeys returns the signing-key use cases.
func NewSigningKeys(repo ports.SigningKeyRepository, jose ports.JOSE, ids ports.IDGenerator, clock ports.Clock, audit usecase.Auditor,
	settings usecase.TokenSettings, admin usecase.AdminSettings) *SigningKeys {
	usecase.MustHave(repo, jose, ids, clock)
	k := &SigningKeys{repo: repo, jose: jose, ids: ids, clock: clock, audit: audit, admins: admin.Admins, settings: settings,
		frameworkTokens: newFrameworkTokenCache()}
	k.snap.Store(&keySnapshot{published: map[domain.SigningKeyID]*loadedKey{}, signers: map[domain.SigningAlgorithm][]*loadedKey{}, jwks: []byte(`{"keys":[]}`)})
	return k
}

// SigningKeyView is what administrators see of a key: never private parts.
type SigningKeyView struct {
	ID          domain.SigningKeyID
	Alg         domain.SigningAlgorithm
	CreatedAt   time.Time
	ActivatesAt time.Time
	// RetiredAt is when a newer key replaces it (zero while none does); it
	// may lie ahead, at the newer key's activation.
	RetiredAt time.Time
	// Status is SigningKeyPending, SigningKeyActive or SigningKeyRetired at
	// the time of the view.
	Status string
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

// The statuses of a signing key.
const (
	SigningKeyPending = "pending" // published, signs from ActivatesAt
	SigningKeyActive  = "active"  // signs (the newest active key of its algorithm)
	SigningKeyRetired = "retired" // only verifies, until PublishedUntil
)

func (k *SigningKeys) view(key domain.SigningKey, now time.Time) SigningKeyView {
	v := SigningKeyView{ID: key.ID, Alg: key.Alg, CreatedAt: key.CreatedAt, ActivatesAt: key.ActivatesAt, RetiredAt: key.RetiredAt, Status: SigningKeyActive}
	switch {
	case !key.RetiredAt.IsZero() && !now.Before(key.RetiredAt):
		v.Status = SigningKeyRetired
	case now.Before(key.ActivatesAt):
		v.Status = SigningKeyPending
	}
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

// latestActivationFirst orders keys as signing picks them: the latest
// activation first, then the newest.
func latestActivationFirst(a, b domain.SigningKey) int {
	return cmp.Or(b.ActivatesAt.Compare(a.ActivatesAt), newestFirst(a, b))
}

// Ensure loads the keys, creating a key for each algorithm that has none
// signing, and prunes keys no longer published. Run at start. A key made
// here signs at once: with no key signing, nothing else could. An active
// key whose private half no configured secret opens (the secret was
// replaced without being kept in GATEHOUSE_SECRETS) is retired and
// replaced, as is any key waiting to sign; their public keys stay
// published, so their tokens still verify.
func (k *SigningKeys) Ensure(ctx context.Context) error {
	k.loadMu.Lock()
	defer k.loadMu.Unlock()
	keys, err := k.repo.List(ctx)
	if err != nil {
		return err
	}
	now := k.clock.Now()
	for _, alg := range domain.SigningAlgorithms {
		signs := func(key domain.SigningKey) bool {
			if key.Alg != alg || !key.SignsAt(now) {
				return false
			}
			_, err := k.jose.Open(key)
			return err == nil
		}
		if slices.ContainsFunc(keys, signs) {
			continue
		}
		if _, err := k.create(ctx, alg, now, now); err != nil {
			return err
		}
		if err := k.retireOthers(ctx, keys, alg, now); err != nil {
			return err
		}
	}
	err = k.refreshLocked(ctx)
	for _, alg := range domain.SigningAlgorithms {
		if k.snap.Load().signer(alg, now) == nil {
			return err
		}
	}
	// Every algorithm signs: a broken retired key, left out of the key set,
	// does not keep the service from starting (Refresh reports it).
	return nil
}

// create makes, stores and returns a new key of alg, signing from activates.
func (k *SigningKeys) create(ctx context.Context, alg domain.SigningAlgorithm, now, activates time.Time) (domain.SigningKey, error) {
	key, err := k.jose.Generate(domain.SigningKeyID(k.ids.NewID()), alg)
	if err != nil {
		return domain.SigningKey{}, err
	}
	key.CreatedAt, key.ActivatesAt = now, activates
	return key, k.repo.Create(ctx, key)
}

// retireOthers retires at at every key of alg among keys not retired by
// then; the new key, absent from keys, is left alone.
func (k *SigningKeys) retireOthers(ctx context.Context, keys []domain.SigningKey, alg domain.SigningAlgorithm, at time.Time) error {
	for _, old := range keys {
		if old.Alg == alg && (old.RetiredAt.IsZero() || old.RetiredAt.After(at)) {
			if err := k.repo.Retire(ctx, old.ID, at); err != nil && !errors.Is(err, domain.ErrNotFound) {
				return err
			}
		}
	}
	return nil
}

// Refresh deletes keys past their publication window and reloads the keys
// from storage. The service runs it every KeyReloadInterval, well within
// JWKSMaxAge and half the activation delay, so every instance publishes a
// rotated key before any signs with it, and an instance that missed an
// immediate rotation elsewhere stops signing with the retired key long
// before that key leaves the key set.
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
	domain.FieldViolation{Field: "alg", Message: "must be EdDSA or RS256"})

// RotateSigningKeys says which keys to replace, and how fast.
type RotateSigningKeys struct {
	// Algs are the algorithms whose key to replace (all when empty).
	Algs []domain.SigningAlgorithm
	// Immediate makes each new key sign at once and retires the key it
	// replaces now: for a compromised key. Other instances do not publish
	// the new key until their next reload, so for up to one reload
	// interval their key sets cannot verify its tokens. Without it the new
	// key is published now and signs after KeyActivationDelay, the old key
	// signing until then.
	Immediate bool
}

// Rotate makes a new key for each algorithm of cmd and retires the key it
// replaces when the new one starts signing. A nil Principal is the command
// line.
func (k *SigningKeys) Rotate(ctx context.Context, req usecase.KeyRequest, cmd RotateSigningKeys) ([]SigningKeyView, error) {
	if err := k.authorizeAdmin(req.Principal); err != nil {
		return nil, k.audit.Record(ctx, req.Actor, "admin.rotate-signing-key", usecase.Target{Type: "signing_key"}, err)
	}
	algs := cmd.Algs
	if len(algs) == 0 {
		algs = domain.SigningAlgorithms
	}
	for _, alg := range algs {
		if !slices.Contains(domain.SigningAlgorithms, alg) {
			return nil, k.audit.Record(ctx, req.Actor, "admin.rotate-signing-key", usecase.Target{Type: "signing_key"}, errBadSigningAlg)
		}
	}
	k.loadMu.Lock()
	defer k.loadMu.Unlock()
	now := k.clock.Now()
	activates := now.Add(k.settings.KeyActivationDelay())
	if cmd.Immediate {
		activates = now
	}
	var out []SigningKeyView
	for _, alg := range slices.Compact(slices.Clone(algs)) {
		key, err := k.rotate(ctx, alg, now, activates)
		if err := k.audit.Record(ctx, req.Actor, "admin.rotate-signing-key", usecase.Target{Type: "signing_key", ID: string(key.ID)}, err); err != nil {
			return nil, err
		}
		out = append(out, k.view(key, now))
	}
	// The new keys are in this instance's key set now, and in the others'
	// at their next Refresh; each signs from its activation time.
	return out, k.reloadLocked(ctx)
}

// rotate creates a key of alg signing from activates, and retires every
// other key of alg at that time (bringing forward later retirements).
func (k *SigningKeys) rotate(ctx context.Context, alg domain.SigningAlgorithm, now, activates time.Time) (domain.SigningKey, error) {
	keys, err := k.repo.List(ctx)
	if err != nil {
		return domain.SigningKey{}, err
	}
	key, err := k.create(ctx, alg, now, activates)
	if err != nil {
		return key, err
	}
	return key, k.retireOthers(ctx, keys, alg, activates)
}

// List returns every published key, newest first.
func (k *SigningKeys) List(ctx context.Context, req usecase.KeyRequest) ([]SigningKeyView, error) {
	if err := k.authorizeAdmin(req.Principal); err != nil {
		return nil, k.audit.Record(ctx, req.Actor, "admin.list-signing-keys", usecase.Target{Type: "signing_key"}, err)
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
			out = append(out, k.view(key, now))
		}
	}
	return out, nil
}

// authorizeAdmin refuses actors other than platform administrators and the CLI.
func (k *SigningKeys) authorizeAdmin(p *usecase.Principal) error {
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
