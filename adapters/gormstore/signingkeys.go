package gormstore

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/domain"
)

// GROUNDWORK STUB: replaced by the signing-key helper.

// SigningKeyRepository implements ports.SigningKeyRepository.
type SigningKeyRepository struct{ db *gorm.DB }

// NewSigningKeyRepository returns the signing-key store.
func NewSigningKeyRepository(db *gorm.DB) *SigningKeyRepository { return &SigningKeyRepository{db: db} }

func (r *SigningKeyRepository) Create(ctx context.Context, k domain.SigningKey) error {
	panic("groundwork")
}
func (r *SigningKeyRepository) List(ctx context.Context) ([]domain.SigningKey, error) {
	panic("groundwork")
}
func (r *SigningKeyRepository) Retire(ctx context.Context, id domain.SigningKeyID, at time.Time) error {
	panic("groundwork")
}
func (r *SigningKeyRepository) DeleteRetiredBefore(ctx context.Context, t time.Time) (int, error) {
	panic("groundwork")
}
