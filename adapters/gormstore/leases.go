package gormstore

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.Leases = (*Leases)(nil)

// Leases stores leases in the leases table, one row per name.
type Leases struct {
	db *gorm.DB
}

// NewLeases returns Leases on db.
func NewLeases(db *gorm.DB) *Leases {
	if db == nil {
		panic("gormstore: nil db")
	}
	return &Leases{db: db}
}

// acquireLeaseSQL inserts the lease, or takes over the row when it is the
// holder's own or has ended: one statement, atomic on both dialects (on
// PostgreSQL the conflicting row is locked, and the condition checked
// against its latest version). A refused takeover changes no row.
const acquireLeaseSQL = `INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
WHERE leases.holder = excluded.holder OR leases.expires_at <= ?`

// Acquire implements ports.Leases.
func (l *Leases) Acquire(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error) {
	if err := ports.ValidateLease(name, holder, ttl); err != nil {
		return false, err
	}
	res := l.db.WithContext(ctx).Exec(acquireLeaseSQL, name, holder, domain.Timestamp(now.Add(ttl)), domain.Timestamp(now))
	if res.Error != nil {
		return false, convertErr("leases.acquire", res.Error, nil, nil)
	}
	return res.RowsAffected == 1, nil
}

// Release implements ports.Leases.
func (l *Leases) Release(ctx context.Context, name, holder string) error {
	err := l.db.WithContext(ctx).Exec(`DELETE FROM leases WHERE name = ? AND holder = ?`, name, holder).Error
	return convertErr("leases.release", err, nil, nil)
}
