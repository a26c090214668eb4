package servicekey

import (
	"context"
	"crypto/subtle"
	"errors"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// MaxRotationOverlap bounds how long a rotated-out secret keeps working.
const MaxRotationOverlap = 30 * 24 * time.Hour

var (
	errInvalidServiceKey = domain.NewError(domain.KindUnauthenticated, "auth.invalid_service_key", "The service key is missing, unknown, revoked or expired")
	errServiceKeyMissing = domain.NewError(domain.KindNotFound, "service_key.not_found", "Service key not found")
	errBadOverlap        = domain.Invalid("request.invalid_overlap", "Invalid overlap", domain.FieldViolation{Field: "overlapSeconds", Message: "must be between 0 and 2592000 seconds (30 days)"})
)

// ServiceKeys issues, rotates, revokes and checks the keys of trusted backends.
type ServiceKeys struct {
	keys   ports.ServiceKeyRepository
	tokens ports.TokenGenerator
	ids    ports.IDGenerator
	clock  ports.Clock
	audit  usecase.Auditor
	admins domain.PlatformAdmins
	stepUp usecase.StepUp

	// lastUsed collects when keys were used, written in batches by
	// FlushLastUsed so that no trusted request waits on a write.
	mu       sync.Mutex
	lastUsed map[domain.ServiceKeyID]time.Time
}

// NewServiceKeys returns the service-key use cases.
func NewServiceKeys(keys ports.ServiceKeyRepository, audit usecase.Auditor, passkeys ports.PasskeyRepository, tokens ports.TokenGenerator,
	ids ports.IDGenerator, clock ports.Clock, admin usecase.AdminSettings, auth usecase.AuthSettings) *ServiceKeys {
	usecase.MustHave(keys, passkeys, tokens, ids, clock)
	return &ServiceKeys{keys: keys, tokens: tokens, ids: ids, clock: clock, audit: audit,
		admins: admin.Admins, stepUp: usecase.NewStepUp(passkeys, clock, auth.StepUpWindow), lastUsed: map[domain.ServiceKeyID]time.Time{}}
}

// authorizeAdmin refuses actors other than platform administrators and the CLI.
func (k *ServiceKeys) authorizeAdmin(p *usecase.Principal) error {
	if p == nil {
		return nil // the command line on the server
	}
	if !k.admins.IsAdmin(p.User) {
		return domain.ErrNotPlatformAdmin
	}
	return nil
}

// authorizeSecret is authorizeAdmin for the actions that hand out a secret
// (create, rotate): an administrator with a second factor must also have
// proven it recently (step-up), since the secret acts on every user. The
// command line on the server is not asked.
func (k *ServiceKeys) authorizeSecret(ctx context.Context, p *usecase.Principal) error {
	if err := k.authorizeAdmin(p); err != nil || p == nil {
		return err
	}
	return k.stepUp.Require(ctx, *p)
}

func keyTarget(id domain.ServiceKeyID) usecase.Target {
	return usecase.Target{Type: "service_key", ID: string(id)}
}

// CreateServiceKey names a new key, its scopes and optional expiry.
type CreateServiceKey struct {
	Name      string
	Scopes    []string
	ExpiresAt time.Time
}

// IssuedKey is a key with its secret, shown this one time.
type IssuedKey struct {
	Key    *domain.ServiceKey
	Secret string
}

func (k *ServiceKeys) newSecret(id domain.ServiceKeyID, now time.Time) (string, domain.ServiceKeySecret) {
	secret := domain.ServiceKeyPrefix + k.tokens.NewSecret(domain.ServiceKeySecretLength)
	return secret, domain.ServiceKeySecret{Hash: domain.HashToken(secret), KeyID: id, CreatedAt: now}
}

// Create issues a key (service_key.created). Its secret exists only in the
// answer: storage keeps its hash.
func (k *ServiceKeys) Create(ctx context.Context, req usecase.KeyRequest, cmd CreateServiceKey) (*IssuedKey, error) {
	var issued *IssuedKey
	t := usecase.Target{Type: "service_key"}
	if err := k.authorizeSecret(ctx, req.Principal); err != nil {
		return nil, k.audit.Record(ctx, req.Actor, "service-key.create", t, err)
	}
	err := k.audit.Change(ctx, req.Actor, "service-key.create", &t, func(ctx context.Context, emit usecase.Emit) error {
		scopes, err := domain.ParseScopes(cmd.Scopes, "scopes")
		if err != nil {
			return err
		}
		now := k.clock.Now()
		id := domain.ServiceKeyID(k.ids.NewID())
		secret, stored := k.newSecret(id, now)
		createdBy := string(req.Actor.Type)
		if req.Actor.ID != "" && req.Actor.Type != domain.ActorCLI {
			createdBy += ":" + req.Actor.ID
		}
		key, err := domain.NewServiceKey(id, cmd.Name, scopes, secret, createdBy, cmd.ExpiresAt, now)
		if err != nil {
			return err
		}
		if err := k.keys.Create(ctx, key, stored); err != nil {
			return err
		}
		issued, t.ID = &IssuedKey{Key: key, Secret: secret}, string(key.ID())
		emit(domain.EventServiceKeyCreated, key)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return issued, nil
}

// List returns every key, revoked ones included, newest first.
func (k *ServiceKeys) List(ctx context.Context, req usecase.KeyRequest) ([]*domain.ServiceKey, error) {
	if err := k.authorizeAdmin(req.Principal); err != nil {
		return nil, k.audit.Record(ctx, req.Actor, "service-key.list", usecase.Target{Type: "service_key"}, err)
	}
	return k.keys.List(ctx)
}

// Rotate issues a new secret for a key. The old one keeps working for
// overlap (zero: it stops at once), so deployments can switch over.
func (k *ServiceKeys) Rotate(ctx context.Context, req usecase.KeyRequest, id domain.ServiceKeyID, overlap time.Duration) (*IssuedKey, error) {
	var issued *IssuedKey
	t := keyTarget(id)
	err := k.authorizeSecret(ctx, req.Principal)
	if err == nil && (overlap < 0 || overlap > MaxRotationOverlap) {
		err = errBadOverlap
	}
	if err != nil {
		return nil, k.audit.Record(ctx, req.Actor, "service-key.rotate", t, err)
	}
	// A rotation changes the key's secret, not the key: it has no event.
	err = k.audit.Change(ctx, req.Actor, "service-key.rotate", &t, func(ctx context.Context, _ usecase.Emit) error {
		now := k.clock.Now()
		secret, stored := k.newSecret(id, now)
		var oldExpires time.Time
		if overlap > 0 {
			oldExpires = now.Add(overlap)
		}
		var key *domain.ServiceKey
		err := k.keys.Rotate(ctx, id, stored, oldExpires, func(sk *domain.ServiceKey) error {
			if !sk.IsActive(now) {
				return errServiceKeyMissing
			}
			sk.SetSecret(secret)
			key = sk
			return nil
		})
		if errors.Is(err, domain.ErrNotFound) {
			return errServiceKeyMissing
		}
		if err != nil {
			return err
		}
		issued = &IssuedKey{Key: key, Secret: secret}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return issued, nil
}

// Revoke ends a key and all its secrets (service_key.revoked); the next
// request with it fails.
func (k *ServiceKeys) Revoke(ctx context.Context, req usecase.KeyRequest, id domain.ServiceKeyID) error {
	t := keyTarget(id)
	if err := k.authorizeAdmin(req.Principal); err != nil {
		return k.audit.Record(ctx, req.Actor, "service-key.revoke", t, err)
	}
	return k.audit.Change(ctx, req.Actor, "service-key.revoke", &t, func(ctx context.Context, emit usecase.Emit) error {
		err := k.keys.Revoke(ctx, id, k.clock.Now())
		if errors.Is(err, domain.ErrNotFound) {
			return errServiceKeyMissing
		}
		if err != nil {
			return err
		}
		key, err := k.keys.Get(ctx, id)
		if err != nil {
			return err
		}
		emit(domain.EventServiceKeyRevoked, key)
		return nil
	})
}

// Authenticate returns the live key whose secret was presented: one indexed
// lookup by the secret's hash and a constant-time comparison of the hashes.
// Missing, unknown, revoked and expired keys are refused alike. Its use is
// recorded in memory and written later by FlushLastUsed.
func (k *ServiceKeys) Authenticate(ctx context.Context, secret string) (*domain.ServiceKey, error) {
	if len(secret) != len(domain.ServiceKeyPrefix)+domain.ServiceKeySecretLength || secret[:len(domain.ServiceKeyPrefix)] != domain.ServiceKeyPrefix {
		return nil, errInvalidServiceKey
	}
	h := domain.HashToken(secret)
	key, stored, err := k.keys.GetBySecretHash(ctx, h)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, errInvalidServiceKey
	}
	if err != nil {
		return nil, err
	}
	now := k.clock.Now()
	// The index found the row by equality; comparing again in constant time
	// keeps the decision itself free of early exits on secret material.
	if subtle.ConstantTimeCompare([]byte(stored.Hash), []byte(h)) != 1 || !stored.IsActive(now) || !key.IsActive(now) {
		return nil, errInvalidServiceKey
	}
	k.mu.Lock()
	k.lastUsed[key.ID()] = now
	k.mu.Unlock()
	return key, nil
}

// FlushLastUsed writes the last-use times gathered since the previous flush
// in one batch. The service runs it every few seconds and at shutdown.
func (k *ServiceKeys) FlushLastUsed(ctx context.Context) error {
	k.mu.Lock()
	used := k.lastUsed
	k.lastUsed = make(map[domain.ServiceKeyID]time.Time, len(used))
	k.mu.Unlock()
	if len(used) == 0 {
		return nil
	}
	if err := k.keys.TouchLastUsed(ctx, used); err != nil {
		// Keep what was not written for the next flush, unless newer uses came in.
		k.mu.Lock()
		for id, t := range used {
			if cur, ok := k.lastUsed[id]; !ok || cur.Before(t) {
				k.lastUsed[id] = t
			}
		}
		k.mu.Unlock()
		return err
	}
	return nil
}
