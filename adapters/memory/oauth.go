package memory

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// GROUNDWORK STUB: replaced by the OAuth-storage helper.

// OAuthClientRepository implements ports.OAuthClientRepository.
type OAuthClientRepository struct{ db *DB }

// NewOAuthClientRepository returns the OAuth-client store.
func NewOAuthClientRepository(db *DB) *OAuthClientRepository { return &OAuthClientRepository{db: db} }

func (r *OAuthClientRepository) Create(ctx context.Context, c domain.OAuthClient) error {
	panic("groundwork")
}
func (r *OAuthClientRepository) Get(ctx context.Context, id domain.OAuthClientID) (domain.OAuthClient, error) {
	panic("groundwork")
}
func (r *OAuthClientRepository) Update(ctx context.Context, id domain.OAuthClientID, fn func(c *domain.OAuthClient) error) error {
	panic("groundwork")
}
func (r *OAuthClientRepository) Delete(ctx context.Context, id domain.OAuthClientID) error {
	panic("groundwork")
}
func (r *OAuthClientRepository) List(ctx context.Context) ([]domain.OAuthClient, error) {
	panic("groundwork")
}

// OAuthGrantRepository implements ports.OAuthGrantRepository.
type OAuthGrantRepository struct{ db *DB }

// NewOAuthGrantRepository returns the store of codes, grants, refresh tokens and consents.
func NewOAuthGrantRepository(db *DB) *OAuthGrantRepository { return &OAuthGrantRepository{db: db} }

func (r *OAuthGrantRepository) CreateCode(ctx context.Context, c domain.AuthorizationCode) error {
	panic("groundwork")
}
func (r *OAuthGrantRepository) ConsumeCode(ctx context.Context, h domain.TokenHash, grant domain.GrantID, now time.Time) (domain.AuthorizationCode, error) {
	panic("groundwork")
}
func (r *OAuthGrantRepository) CreateGrant(ctx context.Context, g domain.OAuthGrant, refresh *domain.RefreshToken) error {
	panic("groundwork")
}
func (r *OAuthGrantRepository) GetGrant(ctx context.Context, id domain.GrantID) (domain.OAuthGrant, error) {
	panic("groundwork")
}
func (r *OAuthGrantRepository) RevokeGrant(ctx context.Context, id domain.GrantID, at time.Time) error {
	panic("groundwork")
}
func (r *OAuthGrantRepository) GetRefreshToken(ctx context.Context, h domain.TokenHash) (domain.RefreshToken, domain.OAuthGrant, error) {
	panic("groundwork")
}
func (r *OAuthGrantRepository) RotateRefreshToken(ctx context.Context, old domain.TokenHash, next domain.RefreshToken, now time.Time) error {
	panic("groundwork")
}
func (r *OAuthGrantRepository) GetConsent(ctx context.Context, user domain.UserID, client domain.OAuthClientID) (domain.Consent, error) {
	panic("groundwork")
}
func (r *OAuthGrantRepository) PutConsent(ctx context.Context, c domain.Consent) error {
	panic("groundwork")
}
func (r *OAuthGrantRepository) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	panic("groundwork")
}
