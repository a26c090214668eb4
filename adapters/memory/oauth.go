package memory

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var (
	_ ports.OAuthClientRepository = (*OAuthClientRepository)(nil)
	_ ports.OAuthGrantRepository  = (*OAuthGrantRepository)(nil)
)

// OAuthClientRepository keeps OAuth clients in the shared DB. Deleting a
// client deletes its codes, grants (with their refresh tokens) and consents,
// as the SQL foreign keys' ON DELETE CASCADE does.
type OAuthClientRepository struct{ db *DB }

// NewOAuthClientRepository returns an OAuthClientRepository on db.
func NewOAuthClientRepository(db *DB) *OAuthClientRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &OAuthClientRepository{db: db}
}

// OAuthGrantRepository keeps authorization codes, grants, refresh tokens and
// consents in the shared DB. The single lock makes ConsumeCode and
// RotateRefreshToken atomic, as the SQL stores' conditional UPDATEs are.
type OAuthGrantRepository struct{ db *DB }

// NewOAuthGrantRepository returns an OAuthGrantRepository on db.
func NewOAuthGrantRepository(db *DB) *OAuthGrantRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &OAuthGrantRepository{db: db}
}

// cloneStrings copies s; empty comes back nil, as the SQL stores read "[]".
func cloneStrings(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

// cloneMethods copies authentication methods, nil when there are none (as
// the SQL stores read them back).
func cloneMethods(m []domain.AuthMethod) []domain.AuthMethod {
	if len(m) == 0 {
		return nil
	}
	return slices.Clone(m)
}

// storedClient returns an independent copy of c as the SQL stores keep it.
func storedClient(c domain.OAuthClient) domain.OAuthClient {
	c.RedirectURIs = cloneStrings(c.RedirectURIs)
	c.PostLogoutRedirectURIs = cloneStrings(c.PostLogoutRedirectURIs)
	c.CreatedAt = timestampOrZero(c.CreatedAt)
	c.UpdatedAt = timestampOrZero(c.UpdatedAt)
	return c
}

func storedCode(c domain.AuthorizationCode) domain.AuthorizationCode {
	c.Scopes = cloneStrings(c.Scopes)
	c.AMR = cloneMethods(c.AMR)
	c.AuthTime = timestampOrZero(c.AuthTime)
	c.CreatedAt = timestampOrZero(c.CreatedAt)
	c.ExpiresAt = timestampOrZero(c.ExpiresAt)
	c.ConsumedAt = timestampOrZero(c.ConsumedAt)
	return c
}

func storedGrant(g domain.OAuthGrant) domain.OAuthGrant {
	g.Scopes = cloneStrings(g.Scopes)
	g.AMR = cloneMethods(g.AMR)
	g.AuthTime = timestampOrZero(g.AuthTime)
	g.CreatedAt = timestampOrZero(g.CreatedAt)
	g.ExpiresAt = timestampOrZero(g.ExpiresAt)
	g.RevokedAt = timestampOrZero(g.RevokedAt)
	return g
}

func storedRefresh(t domain.RefreshToken) domain.RefreshToken {
	t.CreatedAt = timestampOrZero(t.CreatedAt)
	t.ExpiresAt = timestampOrZero(t.ExpiresAt)
	t.UsedAt = timestampOrZero(t.UsedAt)
	return t
}

func storedConsent(c domain.Consent) domain.Consent {
	c.Scopes = cloneStrings(c.Scopes)
	c.CreatedAt = timestampOrZero(c.CreatedAt)
	c.UpdatedAt = timestampOrZero(c.UpdatedAt)
	return c
}

// deleteGrant removes a grant and its refresh tokens. The caller holds the
// write lock.
func (db *DB) deleteGrant(id domain.GrantID) {
	unset(db, db.oauthGrants, id)
	for h, t := range db.oauthRefreshTokens {
		if t.GrantID == id {
			unset(db, db.oauthRefreshTokens, h)
		}
	}
}

// deleteOAuthOf removes every code, grant and consent of the client or of
// the user (the other argument empty), as the foreign keys' ON DELETE
// CASCADE does. The caller holds the write lock.
func (db *DB) deleteOAuthOf(client domain.OAuthClientID, user domain.UserID) {
	match := func(c domain.OAuthClientID, u domain.UserID) bool {
		return (client != "" && c == client) || (user != "" && u == user)
	}
	for h, c := range db.oauthCodes {
		if match(c.ClientID, c.UserID) {
			unset(db, db.oauthCodes, h)
		}
	}
	for id, g := range db.oauthGrants {
		if match(g.ClientID, g.UserID) {
			db.deleteGrant(id)
		}
	}
	for k, c := range db.oauthConsents {
		if match(c.ClientID, c.UserID) {
			unset(db, db.oauthConsents, k)
		}
	}
}

// Create implements ports.OAuthClientRepository.
func (r *OAuthClientRepository) Create(ctx context.Context, c domain.OAuthClient) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.oauthClients[c.ID]; ok {
		return domain.ErrOAuthClientExists
	}
	set(r.db, r.db.oauthClients, c.ID, storedClient(c))
	return nil
}

// Get implements ports.OAuthClientRepository.
func (r *OAuthClientRepository) Get(ctx context.Context, id domain.OAuthClientID) (domain.OAuthClient, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	c, ok := r.db.oauthClients[id]
	if !ok {
		return domain.OAuthClient{}, domain.ErrOAuthClientNotFound
	}
	return storedClient(c), nil
}

// Update implements ports.OAuthClientRepository. The write lock makes it
// atomic; the id cannot change.
func (r *OAuthClientRepository) Update(ctx context.Context, id domain.OAuthClientID, fn func(c *domain.OAuthClient) error) error {
	defer r.db.unlock(r.db.lock(ctx))
	stored, ok := r.db.oauthClients[id]
	if !ok {
		return domain.ErrOAuthClientNotFound
	}
	c := storedClient(stored)
	if err := fn(&c); err != nil {
		return err
	}
	c.ID = id
	set(r.db, r.db.oauthClients, id, storedClient(c))
	return nil
}

// Delete implements ports.OAuthClientRepository.
func (r *OAuthClientRepository) Delete(ctx context.Context, id domain.OAuthClientID) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.oauthClients[id]; !ok {
		return domain.ErrOAuthClientNotFound
	}
	unset(r.db, r.db.oauthClients, id)
	r.db.deleteOAuthOf(id, "")
	return nil
}

// List implements ports.OAuthClientRepository: newest first, ties by id
// descending.
func (r *OAuthClientRepository) List(ctx context.Context) ([]domain.OAuthClient, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	out := make([]domain.OAuthClient, 0, len(r.db.oauthClients))
	for _, c := range r.db.oauthClients {
		out = append(out, storedClient(c))
	}
	slices.SortFunc(out, func(a, b domain.OAuthClient) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(string(b.ID), string(a.ID))
	})
	return out, nil
}

// CreateCode implements ports.OAuthGrantRepository. As the SQL insert, it
// checks the key before the foreign keys.
func (r *OAuthGrantRepository) CreateCode(ctx context.Context, c domain.AuthorizationCode) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.oauthCodes[c.Hash]; ok {
		return domain.ErrOAuthCodeExists
	}
	if _, ok := r.db.oauthClients[c.ClientID]; !ok {
		return domain.ErrOAuthClientNotFound
	}
	if !r.db.hasUser(c.UserID) {
		return domain.ErrUserNotFound
	}
	set(r.db, r.db.oauthCodes, c.Hash, storedCode(c))
	return nil
}

// ConsumeCode implements ports.OAuthGrantRepository.
func (r *OAuthGrantRepository) ConsumeCode(ctx context.Context, h domain.TokenHash, grant domain.GrantID, now time.Time) (domain.AuthorizationCode, error) {
	now = domain.Timestamp(now)
	defer r.db.unlock(r.db.lock(ctx))
	c, ok := r.db.oauthCodes[h]
	switch {
	case !ok:
		return domain.AuthorizationCode{}, domain.ErrCodeNotFound
	case !c.ConsumedAt.IsZero():
		return storedCode(c), domain.ErrCodeConsumed
	case !now.Before(c.ExpiresAt):
		return domain.AuthorizationCode{}, domain.ErrCodeNotFound
	}
	c.ConsumedAt = now
	c.GrantID = grant
	set(r.db, r.db.oauthCodes, h, c)
	return storedCode(c), nil
}

// CreateGrant implements ports.OAuthGrantRepository.
func (r *OAuthGrantRepository) CreateGrant(ctx context.Context, g domain.OAuthGrant, refresh *domain.RefreshToken) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.oauthGrants[g.ID]; ok {
		return domain.ErrOAuthGrantExists
	}
	if refresh != nil {
		if _, ok := r.db.oauthRefreshTokens[refresh.Hash]; ok {
			return domain.ErrOAuthGrantExists
		}
	}
	if _, ok := r.db.oauthClients[g.ClientID]; !ok {
		return domain.ErrOAuthClientNotFound
	}
	if g.UserID != "" && !r.db.hasUser(g.UserID) {
		return domain.ErrUserNotFound
	}
	set(r.db, r.db.oauthGrants, g.ID, storedGrant(g))
	if refresh != nil {
		t := storedRefresh(*refresh)
		t.GrantID = g.ID
		set(r.db, r.db.oauthRefreshTokens, t.Hash, t)
	}
	return nil
}

// GetGrant implements ports.OAuthGrantRepository.
func (r *OAuthGrantRepository) GetGrant(ctx context.Context, id domain.GrantID) (domain.OAuthGrant, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	g, ok := r.db.oauthGrants[id]
	if !ok {
		return domain.OAuthGrant{}, domain.ErrGrantNotFound
	}
	return storedGrant(g), nil
}

// RevokeGrant implements ports.OAuthGrantRepository.
func (r *OAuthGrantRepository) RevokeGrant(ctx context.Context, id domain.GrantID, at time.Time) error {
	defer r.db.unlock(r.db.lock(ctx))
	g, ok := r.db.oauthGrants[id]
	if !ok {
		return domain.ErrGrantNotFound
	}
	if g.RevokedAt.IsZero() {
		g.RevokedAt = domain.Timestamp(at)
		set(r.db, r.db.oauthGrants, id, g)
	}
	return nil
}

// GetRefreshToken implements ports.OAuthGrantRepository.
func (r *OAuthGrantRepository) GetRefreshToken(ctx context.Context, h domain.TokenHash) (domain.RefreshToken, domain.OAuthGrant, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	t, ok := r.db.oauthRefreshTokens[h]
	if !ok {
		return domain.RefreshToken{}, domain.OAuthGrant{}, domain.ErrRefreshNotFound
	}
	return storedRefresh(t), storedGrant(r.db.oauthGrants[t.GrantID]), nil
}

// RotateRefreshToken implements ports.OAuthGrantRepository. Like the SQL
// stores, it refuses an expired token as not found.
func (r *OAuthGrantRepository) RotateRefreshToken(ctx context.Context, old domain.TokenHash, next domain.RefreshToken, now time.Time) error {
	now = domain.Timestamp(now)
	defer r.db.unlock(r.db.lock(ctx))
	t, ok := r.db.oauthRefreshTokens[old]
	switch {
	case !ok:
		return domain.ErrRefreshNotFound
	case !t.UsedAt.IsZero():
		return domain.ErrRefreshTokenUsed
	case !now.Before(t.ExpiresAt):
		return domain.ErrRefreshNotFound
	}
	if _, ok := r.db.oauthRefreshTokens[next.Hash]; ok {
		return domain.ErrOAuthRefreshTokenExists
	}
	if _, ok := r.db.oauthGrants[next.GrantID]; !ok {
		return domain.ErrGrantNotFound
	}
	t.UsedAt = now
	set(r.db, r.db.oauthRefreshTokens, old, t)
	set(r.db, r.db.oauthRefreshTokens, next.Hash, storedRefresh(next))
	return nil
}

// GetConsent implements ports.OAuthGrantRepository.
func (r *OAuthGrantRepository) GetConsent(ctx context.Context, user domain.UserID, client domain.OAuthClientID) (domain.Consent, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	c, ok := r.db.oauthConsents[userClient{user, client}]
	if !ok {
		return domain.Consent{}, domain.ErrConsentNotFound
	}
	return storedConsent(c), nil
}

// PutConsent implements ports.OAuthGrantRepository. Replacing a consent
// keeps its creation time, as the SQL upsert does.
func (r *OAuthGrantRepository) PutConsent(ctx context.Context, c domain.Consent) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.oauthClients[c.ClientID]; !ok {
		return domain.ErrOAuthClientNotFound
	}
	if !r.db.hasUser(c.UserID) {
		return domain.ErrUserNotFound
	}
	key := userClient{c.UserID, c.ClientID}
	if old, ok := r.db.oauthConsents[key]; ok {
		c.CreatedAt = old.CreatedAt
	}
	set(r.db, r.db.oauthConsents, key, storedConsent(c))
	return nil
}

// ListConsents implements ports.OAuthGrantRepository.
func (r *OAuthGrantRepository) ListConsents(ctx context.Context, user domain.UserID) ([]domain.Consent, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	var out []domain.Consent
	for k, c := range r.db.oauthConsents {
		if k.user == user {
			out = append(out, storedConsent(c))
		}
	}
	slices.SortFunc(out, func(a, b domain.Consent) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(string(a.ClientID), string(b.ClientID))
	})
	return out, nil
}

// RevokeConsent implements ports.OAuthGrantRepository under the write lock.
func (r *OAuthGrantRepository) RevokeConsent(ctx context.Context, user domain.UserID, client domain.OAuthClientID, at time.Time) error {
	at = domain.Timestamp(at)
	defer r.db.unlock(r.db.lock(ctx))
	if user == "" { // client-credentials grants have no user
		return domain.ErrConsentNotFound
	}
	key := userClient{user, client}
	_, found := r.db.oauthConsents[key]
	unset(r.db, r.db.oauthConsents, key)
	for id, g := range r.db.oauthGrants {
		if g.UserID == user && g.ClientID == client && g.RevokedAt.IsZero() {
			g.RevokedAt = at
			set(r.db, r.db.oauthGrants, id, g)
			found = true
		}
	}
	if !found {
		return domain.ErrConsentNotFound
	}
	return nil
}

// DeleteExpired implements ports.OAuthGrantRepository. It counts the codes,
// refresh tokens and grants expired at now; refresh tokens that go
// only because their grant went are not counted, as a cascade is not.
func (r *OAuthGrantRepository) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	now = domain.Timestamp(now)
	defer r.db.unlock(r.db.lock(ctx))
	n := 0
	for h, c := range r.db.oauthCodes {
		if !c.ExpiresAt.After(now) {
			unset(r.db, r.db.oauthCodes, h)
			n++
		}
	}
	for h, t := range r.db.oauthRefreshTokens {
		if !t.ExpiresAt.After(now) {
			unset(r.db, r.db.oauthRefreshTokens, h)
			n++
		}
	}
	for id, g := range r.db.oauthGrants {
		if !g.ExpiresAt.After(now) {
			r.db.deleteGrant(id)
			n++
		}
	}
	return n, nil
}
