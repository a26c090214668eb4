package memory

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// The counts the administrators' overview shows, one per store.

// Count implements ports.UserRepository.
func (r *UserRepository) Count(ctx context.Context) (int, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	return len(r.db.users), nil
}

// Count implements ports.OrganizationRepository.
func (r *OrganizationRepository) Count(ctx context.Context) (int, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	return len(r.db.organizations), nil
}

// CountByStatus implements ports.DomainRepository.
func (r *DomainRepository) CountByStatus(ctx context.Context) (map[domain.DomainStatus]int, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	out := map[domain.DomainStatus]int{}
	for _, d := range r.db.domains {
		out[d.Status()]++
	}
	return out, nil
}

// CountActive implements ports.SessionRepository.
func (r *SessionRepository) CountActive(ctx context.Context, now time.Time) (int, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	n := 0
	for _, s := range r.db.sessions {
		if !s.IsExpired(now) {
			n++
		}
	}
	return n, nil
}
