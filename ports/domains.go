package ports

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// DomainRepository stores domains. Implementations are safe for concurrent
// use and return copies, their times in UTC at microsecond precision.
// Deleting an organization deletes its domains.
type DomainRepository interface {
	// Create stores d. A hostname another domain has is domain.ErrHostnameTaken
	// (kind conflict), whatever its organization; a taken id is
	// domain.KindConflict; a missing organization is domain.KindNotFound.
	Create(ctx context.Context, d *domain.Domain) error
	// Get returns the domain id, or domain.ErrDomainNotFound. One lookup by
	// primary key.
	Get(ctx context.Context, id domain.DomainID) (*domain.Domain, error)
	// GetByHostname returns the domain with the normalised hostname, or
	// domain.ErrDomainNotFound. One lookup through the unique index.
	GetByHostname(ctx context.Context, hostname string) (*domain.Domain, error)
	// Update loads the domain, applies fn and saves it atomically; fn may run
	// more than once. If fn fails nothing is saved and its error is returned.
	// A missing domain is domain.ErrDomainNotFound; a missing organization
	// domain.KindNotFound.
	Update(ctx context.Context, id domain.DomainID, fn func(d *domain.Domain) error) error
	// Delete removes the domain, or returns domain.ErrDomainNotFound.
	Delete(ctx context.Context, id domain.DomainID) error
	// List returns one page of domains, newest first (created_at, then id,
	// both descending), reading through an index from q.After, so every page
	// costs the same however many domains there are.
	List(ctx context.Context, q DomainQuery) (DomainPage, error)
	// CountByStatus returns how many domains are in each status that has
	// any, in one statement through the status index.
	CountByStatus(ctx context.Context) (map[domain.DomainStatus]int, error)
	// ClaimDue takes up to limit domains whose next check is due at now (at
	// or before it), the most overdue first, through an index on the next
	// check time, and pushes their next check to now+lease, all in one
	// atomic statement. The domains come back claimed, in no set order:
	// their NextCheckAt is the end of the claim, which their check's Update
	// then replaces with the real next check. Concurrent claimers, in this
	// process or another, never take the same domain (FOR UPDATE SKIP LOCKED
	// on PostgreSQL); a domain whose claimer died is due again when the
	// lease ends. Domains with no check scheduled (failed, or verified by
	// hand) are never due. A limit outside 1 to MaxDueBatch (see
	// ValidateDueBatch) or a lease under a millisecond is domain.KindInvalid.
	ClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*domain.Domain, error)
}

// DomainQuery selects and pages domains.
type DomainQuery struct {
	// OrganizationID, when set, keeps only that organization's domains.
	OrganizationID domain.OrganizationID
	// Status, when set, keeps only domains in that status.
	Status domain.DomainStatus
	// Limit is the page size (1 to 1000); a bad limit is domain.KindInvalid.
	Limit int
	// After, when set, starts the page strictly after this position
	// (creation time and id) in newest-first order.
	After *domain.Position
}

// DomainPage is one page of domains.
type DomainPage struct {
	Domains []*domain.Domain
	// Next is the position of the page's last domain when more follow, and
	// nil on the last page.
	Next *domain.Position
}
