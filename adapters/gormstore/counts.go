package gormstore

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// The counts the administrators' overview shows, one statement each. A
// count reads every row it counts (on PostgreSQL from an index where one
// serves and the visibility map allows): its cost grows with the table,
// about 15 ms per 100,000 rows on PostgreSQL on a small machine (see
// BenchmarkOverview), well within the overview's budget at 100,000 users
// but not at millions.

// Count implements ports.UserRepository.
func (r *UserRepository) Count(ctx context.Context) (int, error) {
	var n int64
	err := conn(ctx, r.db).Model(&userRow{}).Count(&n).Error
	return int(n), convertErr("users.count", err, nil, nil)
}

// Count implements ports.OrganizationRepository.
func (r *OrganizationRepository) Count(ctx context.Context) (int, error) {
	var n int64
	err := conn(ctx, r.db).Model(&organizationRow{}).Count(&n).Error
	return int(n), convertErr("organizations.count", err, nil, nil)
}

type statusCount struct {
	Status string
	N      int
}

// CountByStatus implements ports.DomainRepository. The status index
// (status, created_at, id) serves the grouping.
func (r *DomainRepository) CountByStatus(ctx context.Context) (map[domain.DomainStatus]int, error) {
	var rows []statusCount
	if err := conn(ctx, r.db).Raw(`SELECT status, count(*) AS n FROM domains GROUP BY status`).Scan(&rows).Error; err != nil {
		return nil, convertErr("domains.count_by_status", err, nil, nil)
	}
	out := make(map[domain.DomainStatus]int, len(rows))
	for _, c := range rows {
		out[domain.DomainStatus(c.Status)] = c.N
	}
	return out, nil
}

// CountActive implements ports.SessionRepository, through the index on
// expires_at. now is normalised like the stored times: SQLite compares
// them as text.
func (r *SessionRepository) CountActive(ctx context.Context, now time.Time) (int, error) {
	var n int64
	err := conn(ctx, r.db).Model(&sessionRow{}).Where("expires_at > ?", domain.Timestamp(now)).Count(&n).Error
	return int(n), convertErr("sessions.count_active", err, nil, nil)
}
