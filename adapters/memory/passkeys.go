package memory

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var (
	_ ports.PasskeyRepository           = (*PasskeyRepository)(nil)
	_ ports.WebAuthnChallengeRepository = (*WebAuthnChallengeRepository)(nil)
)

// PasskeyRepository keeps WebAuthn credentials in the shared DB.
type PasskeyRepository struct{ db *DB }

// NewPasskeyRepository returns a PasskeyRepository on db.
func NewPasskeyRepository(db *DB) *PasskeyRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &PasskeyRepository{db: db}
}

// WebAuthnChallengeRepository keeps WebAuthn challenges in the shared DB.
type WebAuthnChallengeRepository struct{ db *DB }

// NewWebAuthnChallengeRepository returns a WebAuthnChallengeRepository on db.
func NewWebAuthnChallengeRepository(db *DB) *WebAuthnChallengeRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &WebAuthnChallengeRepository{db: db}
}

func storedPasskey(c domain.PasskeyCredential) domain.PasskeyCredential {
	c.ID = cloneBytes(c.ID)
	c.PublicKey = cloneBytes(c.PublicKey)
	c.AAGUID = cloneBytes(c.AAGUID)
	c.Transports = cloneStrings(c.Transports)
	c.CreatedAt = timestampOrZero(c.CreatedAt)
	c.LastUsedAt = timestampOrZero(c.LastUsedAt)
	return c
}

func storedWebAuthnChallenge(c domain.WebAuthnChallenge) domain.WebAuthnChallenge {
	c.IDHash = cloneBytes(c.IDHash)
	c.Challenge = cloneBytes(c.Challenge)
	c.SessionData = cloneBytes(c.SessionData)
	c.ExpiresAt = timestampOrZero(c.ExpiresAt)
	c.UsedAt = timestampOrZero(c.UsedAt)
	return c
}

// Create implements ports.PasskeyRepository.
func (r *PasskeyRepository) Create(ctx context.Context, c domain.PasskeyCredential) error {
	defer r.db.unlock(r.db.lock(ctx))
	if !r.db.hasUser(c.UserID) {
		return domain.ErrUserNotFound
	}
	if _, ok := r.db.passkeys[string(c.ID)]; ok {
		return domain.ErrPasskeyExists
	}
	set(r.db, r.db.passkeys, string(c.ID), storedPasskey(c))
	return nil
}

// Get implements ports.PasskeyRepository.
func (r *PasskeyRepository) Get(ctx context.Context, id []byte) (domain.PasskeyCredential, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	c, ok := r.db.passkeys[string(id)]
	if !ok {
		return domain.PasskeyCredential{}, domain.ErrPasskeyNotFound
	}
	return storedPasskey(c), nil
}

// ListByUser implements ports.PasskeyRepository.
func (r *PasskeyRepository) ListByUser(ctx context.Context, user domain.UserID) ([]domain.PasskeyCredential, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	var out []domain.PasskeyCredential
	for _, c := range r.db.passkeys {
		if c.UserID == user {
			out = append(out, storedPasskey(c))
		}
	}
	slices.SortFunc(out, func(a, b domain.PasskeyCredential) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return bytes.Compare(b.ID, a.ID)
	})
	return out, nil
}

// owned returns user's credential id. The caller holds the lock.
func (r *PasskeyRepository) owned(user domain.UserID, id []byte) (domain.PasskeyCredential, error) {
	c, ok := r.db.passkeys[string(id)]
	if !ok || c.UserID != user {
		return domain.PasskeyCredential{}, domain.ErrPasskeyNotFound
	}
	return c, nil
}

// Rename implements ports.PasskeyRepository.
func (r *PasskeyRepository) Rename(ctx context.Context, user domain.UserID, id []byte, name string) error {
	defer r.db.unlock(r.db.lock(ctx))
	c, err := r.owned(user, id)
	if err != nil {
		return err
	}
	c.Name = strings.Clone(name)
	set(r.db, r.db.passkeys, string(id), c)
	return nil
}

// Delete implements ports.PasskeyRepository.
func (r *PasskeyRepository) Delete(ctx context.Context, user domain.UserID, id []byte) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, err := r.owned(user, id); err != nil {
		return err
	}
	unset(r.db, r.db.passkeys, string(id))
	return nil
}

// UpdateSignCount implements ports.PasskeyRepository.
func (r *PasskeyRepository) UpdateSignCount(ctx context.Context, id []byte, old, next uint32, at time.Time) error {
	defer r.db.unlock(r.db.lock(ctx))
	c, ok := r.db.passkeys[string(id)]
	switch {
	case !ok:
		return domain.ErrPasskeyNotFound
	case c.SignCount != old || ((old != 0 || next != 0) && next <= old):
		return domain.ErrPasskeyCounterRegressed
	}
	c.SignCount, c.LastUsedAt = next, domain.Timestamp(at)
	set(r.db, r.db.passkeys, string(id), c)
	return nil
}

// CountByUser implements ports.PasskeyRepository.
func (r *PasskeyRepository) CountByUser(ctx context.Context, user domain.UserID) (int, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	n := 0
	for _, c := range r.db.passkeys {
		if c.UserID == user {
			n++
		}
	}
	return n, nil
}

// Create implements ports.WebAuthnChallengeRepository.
func (r *WebAuthnChallengeRepository) Create(ctx context.Context, c domain.WebAuthnChallenge) error {
	defer r.db.unlock(r.db.lock(ctx))
	if c.UserID != "" && !r.db.hasUser(c.UserID) {
		return domain.ErrUserNotFound
	}
	if _, ok := r.db.webauthnChallenges[string(c.IDHash)]; ok {
		return domain.ErrWebAuthnChallengeExists
	}
	set(r.db, r.db.webauthnChallenges, string(c.IDHash), storedWebAuthnChallenge(c))
	return nil
}

// Consume implements ports.WebAuthnChallengeRepository.
func (r *WebAuthnChallengeRepository) Consume(ctx context.Context, idHash []byte, at time.Time) (domain.WebAuthnChallenge, error) {
	defer r.db.unlock(r.db.lock(ctx))
	c, ok := r.db.webauthnChallenges[string(idHash)]
	if !ok || !c.UsedAt.IsZero() || !domain.Timestamp(at).Before(c.ExpiresAt) {
		return domain.WebAuthnChallenge{}, domain.ErrWebAuthnChallengeNotFound
	}
	c.UsedAt = domain.Timestamp(at)
	set(r.db, r.db.webauthnChallenges, string(idHash), c)
	return storedWebAuthnChallenge(c), nil
}

// DeleteExpired implements ports.WebAuthnChallengeRepository.
func (r *WebAuthnChallengeRepository) DeleteExpired(ctx context.Context, before time.Time) (int, error) {
	defer r.db.unlock(r.db.lock(ctx))
	n := 0
	for k, c := range r.db.webauthnChallenges {
		if c.ExpiresAt.Before(domain.Timestamp(before)) {
			unset(r.db, r.db.webauthnChallenges, k)
			n++
		}
	}
	return n, nil
}
