package gormstore

import (
	"context"
	"errors"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.LinkedAccountRepository = (*LinkedAccountRepository)(nil)

// LinkedAccountRepository stores the upstream identities tied to users in
// the linked_accounts table. Deleting the user or the provider deletes
// them by the foreign keys' ON DELETE CASCADE.
type LinkedAccountRepository struct {
	db *gorm.DB
	// order is a user's list order: on PostgreSQL the id in the "C"
	// collation, byte by byte as SQLite and the memory store compare it,
	// which is the collation linked_accounts_user_id_created_at_idx indexes
	// it in.
	order string
}

// NewLinkedAccountRepository returns a LinkedAccountRepository on db.
func NewLinkedAccountRepository(db *gorm.DB) *LinkedAccountRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	order := "created_at, id"
	if DialectOf(db) == DialectPostgres {
		order = `created_at, id COLLATE "C"`
	}
	return &LinkedAccountRepository{db: db, order: order}
}

type linkedAccountRow struct {
	ID         string     `gorm:"column:id;primaryKey;type:text;index:linked_accounts_user_id_created_at_idx,priority:3"`
	UserID     string     `gorm:"column:user_id;not null;index:linked_accounts_user_id_created_at_idx,priority:1"`
	ProviderID string     `gorm:"column:provider_id;not null;uniqueIndex:linked_accounts_provider_id_subject_key,priority:1"`
	Subject    string     `gorm:"column:subject;not null;uniqueIndex:linked_accounts_provider_id_subject_key,priority:2"`
	Email      string     `gorm:"column:email;not null"`
	Scopes     stringList `gorm:"column:scopes;not null"`
	// SealedTokens is NULL when no token was kept.
	SealedTokens []byte `gorm:"column:sealed_tokens"`
	// The expiries are NULL when unknown.
	AccessTokenExpiresAt  *time.Time `gorm:"column:access_token_expires_at"`
	RefreshTokenExpiresAt *time.Time `gorm:"column:refresh_token_expires_at"`
	CreatedAt             time.Time  `gorm:"column:created_at;not null;autoCreateTime:false;index:linked_accounts_user_id_created_at_idx,priority:2"`
	UpdatedAt             time.Time  `gorm:"column:updated_at;not null;autoUpdateTime:false"`
}

func (linkedAccountRow) TableName() string { return "linked_accounts" }

func linkedAccountFromDomain(a domain.LinkedAccount) linkedAccountRow {
	return linkedAccountRow{ID: string(a.ID), UserID: string(a.UserID), ProviderID: string(a.ProviderID), Subject: a.Subject,
		Email: a.Email, Scopes: stringList(a.Scopes), SealedTokens: nonEmpty(a.SealedTokens),
		AccessTokenExpiresAt: nullTime(a.AccessTokenExpiresAt), RefreshTokenExpiresAt: nullTime(a.RefreshTokenExpiresAt),
		CreatedAt: domain.Timestamp(a.CreatedAt), UpdatedAt: domain.Timestamp(a.UpdatedAt)}
}

func (r linkedAccountRow) toDomain() domain.LinkedAccount {
	return domain.LinkedAccount{ID: domain.LinkedAccountID(r.ID), UserID: domain.UserID(r.UserID),
		ProviderID: domain.IdentityProviderID(r.ProviderID), Subject: r.Subject, Email: r.Email,
		Scopes: []string(r.Scopes), SealedTokens: nonEmpty(r.SealedTokens),
		AccessTokenExpiresAt: fromNullTime(r.AccessTokenExpiresAt), RefreshTokenExpiresAt: fromNullTime(r.RefreshTokenExpiresAt),
		CreatedAt: domain.Timestamp(r.CreatedAt), UpdatedAt: domain.Timestamp(r.UpdatedAt)}
}

// missingReference tells which reference of a row that failed its foreign
// keys is missing: user, when it is named and does not exist, else the
// other one.
func missingReference(db *gorm.DB, op string, user domain.UserID, other *domain.Error) error {
	if user != "" {
		var n int64
		if err := db.Model(&userRow{}).Where("id = ?", string(user)).Count(&n).Error; err != nil {
			return convertErr(op, err, nil, nil)
		}
		if n == 0 {
			return domain.ErrUserNotFound
		}
	}
	return other
}

// Create implements ports.LinkedAccountRepository. Either unique key (the
// id, or the provider and subject) is the same conflict; a foreign-key
// violation is told apart by looking the user up.
func (r *LinkedAccountRepository) Create(ctx context.Context, a domain.LinkedAccount) error {
	db := conn(ctx, r.db)
	row := linkedAccountFromDomain(a)
	err := db.Create(&row).Error
	if err != nil && isForeignKeyViolation(err) {
		return missingReference(db, "linked_accounts.create", a.UserID, domain.ErrIdentityProviderNotFound)
	}
	return convertErr("linked_accounts.create", err, nil, domain.ErrLinkedAccountExists)
}

// CreateWithUser implements ports.LinkedAccountRepository: the user's row
// and the account's in one transaction.
func (r *LinkedAccountRepository) CreateWithUser(ctx context.Context, u *domain.User, a domain.LinkedAccount) error {
	if a.UserID != u.ID() {
		return domain.Internal("gormstore: linked_accounts.create_with_user", errors.New("the account is another user's"))
	}
	return transaction(ctx, r.db, func(tx *gorm.DB) error {
		user := userFromDomain(u)
		if err := tx.Create(&user).Error; err != nil {
			return convertErr("linked_accounts.create_with_user", err, nil, domain.ErrUserExists)
		}
		row := linkedAccountFromDomain(a)
		err := tx.Create(&row).Error
		if err != nil && isForeignKeyViolation(err) {
			return domain.ErrIdentityProviderNotFound
		}
		return convertErr("linked_accounts.create_with_user", err, nil, domain.ErrLinkedAccountExists)
	})
}

// GetBySubject implements ports.LinkedAccountRepository, through
// linked_accounts_provider_id_subject_key.
func (r *LinkedAccountRepository) GetBySubject(ctx context.Context, provider domain.IdentityProviderID, subject string) (domain.LinkedAccount, error) {
	var row linkedAccountRow
	err := conn(ctx, r.db).Where("provider_id = ? AND subject = ?", string(provider), subject).Take(&row).Error
	if err != nil {
		return domain.LinkedAccount{}, convertErr("linked_accounts.get_by_subject", err, domain.ErrLinkedAccountNotFound, nil)
	}
	return row.toDomain(), nil
}

// ListByUser implements ports.LinkedAccountRepository, through
// linked_accounts_user_id_created_at_idx.
func (r *LinkedAccountRepository) ListByUser(ctx context.Context, user domain.UserID) ([]domain.LinkedAccount, error) {
	var rows []linkedAccountRow
	if err := conn(ctx, r.db).Where("user_id = ?", string(user)).Order(r.order).Find(&rows).Error; err != nil {
		return nil, convertErr("linked_accounts.list_by_user", err, nil, nil)
	}
	var out []domain.LinkedAccount
	for _, row := range rows {
		out = append(out, row.toDomain())
	}
	return out, nil
}

// ListByUsers implements ports.LinkedAccountRepository: one query on the
// (user_id, created_at) index.
func (r *LinkedAccountRepository) ListByUsers(ctx context.Context, users []domain.UserID) ([]domain.LinkedAccount, error) {
	if len(users) == 0 {
		return nil, nil
	}
	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = string(u)
	}
	var rows []linkedAccountRow
	if err := conn(ctx, r.db).Where("user_id IN ?", ids).Order("user_id, " + r.order).Find(&rows).Error; err != nil {
		return nil, convertErr("linked_accounts.list_by_users", err, nil, nil)
	}
	out := make([]domain.LinkedAccount, 0, len(rows))
	for _, row := range rows {
		out = append(out, row.toDomain())
	}
	return out, nil
}

// Update implements ports.LinkedAccountRepository. On PostgreSQL the row is
// locked with SELECT … FOR UPDATE; on SQLite the immediate transaction
// already holds the database's write lock. Only the columns the port lets
// change are written.
func (r *LinkedAccountRepository) Update(ctx context.Context, user domain.UserID, id domain.LinkedAccountID, fn func(a *domain.LinkedAccount) error) error {
	var fnErr error
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		var row linkedAccountRow
		if err := forUpdate(tx).Where("id = ? AND user_id = ?", string(id), string(user)).Take(&row).Error; err != nil {
			return convertErr("linked_accounts.update", err, domain.ErrLinkedAccountNotFound, nil)
		}
		a := row.toDomain()
		if fnErr = fn(&a); fnErr != nil {
			return fnErr
		}
		return tx.Model(&linkedAccountRow{}).Where("id = ?", string(id)).Updates(map[string]any{
			"email": a.Email, "scopes": stringList(a.Scopes), "sealed_tokens": nonEmpty(a.SealedTokens),
			"access_token_expires_at":  nullTime(a.AccessTokenExpiresAt),
			"refresh_token_expires_at": nullTime(a.RefreshTokenExpiresAt),
			"updated_at":               domain.Timestamp(a.UpdatedAt),
		}).Error
	})
	if fnErr != nil {
		return fnErr
	}
	return convertErr("linked_accounts.update", err, nil, nil)
}

// Delete implements ports.LinkedAccountRepository. With keepOne it reads
// the user's accounts locked (SELECT … FOR UPDATE on PostgreSQL; SQLite's
// immediate transaction holds the write lock) before deleting: a concurrent
// unlink of another of them waits, then reads the rows left after this
// one's commit and sees whether the user still keeps another. A single
// DELETE conditional on a count would not do on PostgreSQL: two of them
// deleting different rows never wait on each other, and each counts the
// rows of its own snapshot.
func (r *LinkedAccountRepository) Delete(ctx context.Context, user domain.UserID, id domain.LinkedAccountID, keepOne bool) error {
	if !keepOne {
		res := conn(ctx, r.db).Where("id = ? AND user_id = ?", string(id), string(user)).Delete(&linkedAccountRow{})
		return affectedOne("linked_accounts.delete", res, domain.ErrLinkedAccountNotFound)
	}
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		var ids []string
		// In id order, so concurrent unlinks take the row locks in one order
		// and cannot deadlock.
		err := forUpdate(tx.Model(&linkedAccountRow{})).Where("user_id = ?", string(user)).Order("id").Pluck("id", &ids).Error
		if err != nil {
			return err
		}
		switch {
		case !slices.Contains(ids, string(id)):
			return domain.ErrLinkedAccountNotFound
		case len(ids) < 2:
			return domain.ErrLastLinkedAccount
		}
		return tx.Where("id = ? AND user_id = ?", string(id), string(user)).Delete(&linkedAccountRow{}).Error
	})
	return convertErr("linked_accounts.delete", err, nil, nil)
}
