package gormstore

import (
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// Row models mirror the migrated schema exactly; the schema-drift test holds
// them to it. Timestamps are never filled in by gorm: the domain sets them.

type userRow struct {
	ID            string    `gorm:"column:id;primaryKey;type:text"`
	Name          string    `gorm:"column:name;not null"`
	Email         string    `gorm:"column:email;not null;uniqueIndex:users_email_key"`
	EmailVerified bool      `gorm:"column:email_verified;not null"`
	Image         string    `gorm:"column:image;not null"`
	CreatedAt     time.Time `gorm:"column:created_at;not null;autoCreateTime:false"`
	UpdatedAt     time.Time `gorm:"column:updated_at;not null;autoUpdateTime:false"`
}

func (userRow) TableName() string { return "users" }

func userFromDomain(u *domain.User) userRow {
	return userRow{
		ID: string(u.ID()), Name: u.Name(), Email: string(u.Email()), EmailVerified: u.EmailVerified(),
		Image: u.Image(), CreatedAt: u.CreatedAt(), UpdatedAt: u.UpdatedAt(),
	}
}

func (r userRow) toDomain() *domain.User {
	return domain.RehydrateUser(domain.UserID(r.ID), r.Name, domain.Email(r.Email), r.EmailVerified, r.Image, r.CreatedAt, r.UpdatedAt)
}

// RowModels returns a new value of every row model, so that a schema-drift
// test can compare them with the migrated schema.
func RowModels() []any { return []any{&userRow{}} }
