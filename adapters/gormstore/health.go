package gormstore

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.HealthChecker = (*HealthChecker)(nil)

// HealthChecker pings the database.
type HealthChecker struct {
	db *gorm.DB
}

// NewHealthChecker returns a HealthChecker on db.
func NewHealthChecker(db *gorm.DB) *HealthChecker { return &HealthChecker{db: db} }

// Name implements ports.HealthChecker.
func (*HealthChecker) Name() string { return "database" }

// pingTimeout bounds a check whose context has no deadline, so a database
// that accepts connections but never answers cannot hang readiness.
const pingTimeout = 2 * time.Second

// Check implements ports.HealthChecker with a round trip to the server.
func (h *HealthChecker) Check(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, pingTimeout)
		defer cancel()
	}
	sqlDB, err := h.db.DB()
	if err == nil {
		err = sqlDB.PingContext(ctx)
	}
	if err != nil {
		// Whatever the driver says, a failed ping means the database cannot serve.
		return &domain.Error{Kind: domain.KindUnavailable, Code: "database.unavailable",
			Message: "the database is unavailable", Err: fmt.Errorf("gormstore: ping: %w", err)}
	}
	return nil
}
