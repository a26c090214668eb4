package memory

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.DomainRepository = (*DomainRepository)(nil)

// DomainRepository keeps domains in the shared DB, indexed by hostname as
// the SQL stores' unique index does. Deleting an organization deletes its
// domains (see deleteOrganizationDomains), as ON DELETE CASCADE does.
type DomainRepository struct {
	db *DB
}

// NewDomainRepository returns a DomainRepository on db.
func NewDomainRepository(db *DB) *DomainRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &DomainRepository{db: db}
}

// storedDomain returns an independent copy of d as the SQL stores keep it:
// every time in UTC at microsecond precision (zero stays zero), the
// records' observed values cloned.
func storedDomain(d *domain.Domain) *domain.Domain {
	s := d.State()
	for i := range s.Records {
		s.Records[i].LastCheckedAt = timestampOrZero(s.Records[i].LastCheckedAt)
		if len(s.Records[i].Observed) == 0 {
			s.Records[i].Observed = nil
		}
	}
	for _, t := range []*time.Time{&s.LastCheckedAt, &s.NextCheckAt, &s.WindowStart, &s.MissingSince,
		&s.VerifiedAt, &s.FailedAt, &s.CreatedAt, &s.UpdatedAt} {
		*t = timestampOrZero(*t)
	}
	return domain.RehydrateDomain(s)
}

// copyDomain returns an independent copy of a stored domain.
func copyDomain(d *domain.Domain) *domain.Domain { return domain.RehydrateDomain(d.State()) }

// hasOrganization reports whether org exists; "" (no organization) always
// does, as a NULL foreign key. The caller holds the lock.
func (db *DB) hasOrganization(org domain.OrganizationID) bool {
	if org == "" {
		return true
	}
	_, ok := db.organizations[org]
	return ok
}

// deleteOrganizationDomains removes org's domains, as the SQL foreign key's
// ON DELETE CASCADE does. The caller holds the write lock.
func (db *DB) deleteOrganizationDomains(org domain.OrganizationID) {
	for id, d := range db.domains {
		if d.OrganizationID() == org {
			db.unbindDomain(id)
			unset(db, db.domainByHostname, d.Hostname())
			unset(db, db.domains, id)
		}
	}
}

// Create implements ports.DomainRepository. As the SQL insert, it checks
// the keys before the foreign key.
func (r *DomainRepository) Create(ctx context.Context, d *domain.Domain) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.domains[d.ID()]; ok {
		return domain.ErrDomainExists
	}
	if _, ok := r.db.domainByHostname[d.Hostname()]; ok {
		return domain.ErrHostnameTaken
	}
	if !r.db.hasOrganization(d.OrganizationID()) {
		return domain.ErrOrganizationNotFound
	}
	set(r.db, r.db.domains, d.ID(), storedDomain(d))
	set(r.db, r.db.domainByHostname, d.Hostname(), d.ID())
	return nil
}

// Get implements ports.DomainRepository.
func (r *DomainRepository) Get(ctx context.Context, id domain.DomainID) (*domain.Domain, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	d, ok := r.db.domains[id]
	if !ok {
		return nil, domain.ErrDomainNotFound
	}
	return copyDomain(d), nil
}

// GetByHostname implements ports.DomainRepository.
func (r *DomainRepository) GetByHostname(ctx context.Context, hostname string) (*domain.Domain, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	id, ok := r.db.domainByHostname[hostname]
	if !ok {
		return nil, domain.ErrDomainNotFound
	}
	return copyDomain(r.db.domains[id]), nil
}

// Update implements ports.DomainRepository. The write lock makes it atomic:
// fn runs once.
func (r *DomainRepository) Update(ctx context.Context, id domain.DomainID, fn func(d *domain.Domain) error) error {
	defer r.db.unlock(r.db.lock(ctx))
	stored, ok := r.db.domains[id]
	if !ok {
		return domain.ErrDomainNotFound
	}
	d := copyDomain(stored)
	if err := fn(d); err != nil {
		return err
	}
	if !r.db.hasOrganization(d.OrganizationID()) {
		return domain.ErrOrganizationNotFound
	}
	// Domain has no setters for its id or hostname, so the index stays valid.
	set(r.db, r.db.domains, id, storedDomain(d))
	return nil
}

// Delete implements ports.DomainRepository. The domain's binding to an
// identity provider goes with it.
func (r *DomainRepository) Delete(ctx context.Context, id domain.DomainID) error {
	defer r.db.unlock(r.db.lock(ctx))
	d, ok := r.db.domains[id]
	if !ok {
		return domain.ErrDomainNotFound
	}
	r.db.unbindDomain(id)
	unset(r.db, r.db.domainByHostname, d.Hostname())
	unset(r.db, r.db.domains, id)
	return nil
}

// compareDomainPosition compares d's (created_at, id) with (at, id) as the
// SQL row-value comparison does.
func compareDomainPosition(d *domain.Domain, at time.Time, id string) int {
	if c := d.CreatedAt().Compare(at); c != 0 {
		return c
	}
	return strings.Compare(string(d.ID()), id)
}

// List implements ports.DomainRepository. It scans every domain: the memory
// store serves tests and development, not large deployments.
func (r *DomainRepository) List(ctx context.Context, q ports.DomainQuery) (ports.DomainPage, error) {
	if err := q.Validate(); err != nil {
		return ports.DomainPage{}, err
	}
	var after *domain.Position
	if q.After != nil {
		after = &domain.Position{At: domain.Timestamp(q.After.At), ID: q.After.ID}
	}
	defer r.db.runlock(r.db.rlock(ctx))
	var all []*domain.Domain
	for _, d := range r.db.domains {
		switch {
		case q.OrganizationID != "" && d.OrganizationID() != q.OrganizationID,
			q.Status != "" && d.Status() != q.Status,
			after != nil && compareDomainPosition(d, after.At, after.ID) >= 0:
			continue
		}
		all = append(all, d)
	}
	// Newest first: created_at, then id, both descending.
	slices.SortFunc(all, func(a, b *domain.Domain) int { return compareDomainPosition(b, a.CreatedAt(), string(a.ID())) })
	page := ports.DomainPage{Domains: make([]*domain.Domain, 0, min(q.Limit, len(all)))}
	for _, d := range all[:min(q.Limit, len(all))] {
		page.Domains = append(page.Domains, copyDomain(d))
	}
	if len(all) > q.Limit {
		last := all[q.Limit-1]
		page.Next = &domain.Position{At: last.CreatedAt(), ID: string(last.ID())}
	}
	return page, nil
}

// ClaimDue implements ports.DomainRepository: under the write lock, the
// domains whose next check is at or before now, the most overdue first,
// ties broken by id, get their next check pushed to now+lease.
func (r *DomainRepository) ClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*domain.Domain, error) {
	if err := ports.ValidateDueBatch(limit, lease); err != nil {
		return nil, err
	}
	now = domain.Timestamp(now)
	until := domain.Timestamp(now.Add(lease))
	defer r.db.unlock(r.db.lock(ctx))
	var due []*domain.Domain
	for _, d := range r.db.domains {
		if next := d.NextCheckAt(); !next.IsZero() && !next.After(now) {
			due = append(due, d)
		}
	}
	slices.SortFunc(due, func(a, b *domain.Domain) int {
		if c := a.NextCheckAt().Compare(b.NextCheckAt()); c != 0 {
			return c
		}
		return strings.Compare(string(a.ID()), string(b.ID()))
	})
	out := make([]*domain.Domain, 0, min(limit, len(due)))
	for _, d := range due[:min(limit, len(due))] {
		s := d.State()
		s.NextCheckAt = until
		claimed := domain.RehydrateDomain(s)
		set(r.db, r.db.domains, d.ID(), claimed)
		out = append(out, copyDomain(claimed))
	}
	return out, nil
}
