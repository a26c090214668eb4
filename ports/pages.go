package ports

import (
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// The largest page each listing returns, and the largest batch ClaimDue takes.
// Every store takes them from here, with the checks below, so the memory and
// SQL stores refuse the same queries.
const (
	MaxOrganizationPage = 1000
	MaxMemberPage       = 1000
	MaxDomainPage       = 1000
	MaxDueBatch         = 1000
	MaxUserPage         = 1000
	MaxAuditPage        = 1000
)

// errLimit is a page size outside 1 to 1000 (every Max above is 1000).
var errLimit = domain.Invalid("paging.invalid_limit", "Invalid limit", domain.FieldViolation{Field: "limit", Message: "must be 1 to 1000"})

// The refusals of a bad user page.
var (
	errUserPage      = domain.Invalid("user.query_unsupported", "the page must hold 1 to 1000 users")
	errUserQueryPage = domain.Invalid("user.query_unsupported", "the page must hold 1 to 1000 users from a non-negative offset")
)

// Validate returns an error of kind domain.KindInvalid for a limit outside 1
// to MaxOrganizationPage.
func (q OrganizationQuery) Validate() error {
	if q.Limit < 1 || q.Limit > MaxOrganizationPage {
		return errLimit
	}
	return nil
}

// Validate returns an error of kind domain.KindInvalid for a limit outside 1
// to MaxMemberPage, a negative offset, or an offset with a cursor.
func (q MemberQuery) Validate() error {
	switch {
	case q.Limit < 1 || q.Limit > MaxMemberPage:
		return errLimit
	case q.Offset < 0:
		return domain.Invalid("paging.invalid_offset", "Invalid offset", domain.FieldViolation{Field: "offset", Message: "must not be negative"})
	case q.After != nil && q.Offset != 0:
		return domain.Invalid("paging.invalid_offset", "Invalid offset", domain.FieldViolation{Field: "offset", Message: "must be 0 with a cursor"})
	}
	return nil
}

// Validate returns an error of kind domain.KindInvalid for a limit outside 1
// to MaxDomainPage.
func (q DomainQuery) Validate() error {
	if q.Limit < 1 || q.Limit > MaxDomainPage {
		return errLimit
	}
	return nil
}

// errLease is a claim's lease under a millisecond, which the stores could
// not tell from no claim at all.
var errLease = domain.Invalid("claim.invalid_lease", "Invalid lease", domain.FieldViolation{Field: "lease", Message: "must be at least 1ms"})

// ValidateDueBatch returns an error of kind domain.KindInvalid for a batch
// of ClaimDue outside 1 to MaxDueBatch, or a lease under a millisecond.
func ValidateDueBatch(limit int, lease time.Duration) error {
	if limit < 1 || limit > MaxDueBatch {
		return errLimit
	}
	if lease < time.Millisecond {
		return errLease
	}
	return nil
}

// Validate returns an error of kind domain.KindInvalid for a limit outside 1
// to MaxUserPage.
func (q UserPageQuery) Validate() error {
	if q.Limit < 1 || q.Limit > MaxUserPage {
		return errUserPage
	}
	return nil
}

// ValidatePage returns an error of kind domain.KindInvalid for a limit
// outside 1 to MaxUserPage or a negative offset. Which conditions and sorts
// a store supports it checks itself.
func (q UserQuery) ValidatePage() error {
	if q.Limit < 1 || q.Limit > MaxUserPage || q.Offset < 0 {
		return errUserQueryPage
	}
	return nil
}

// PageSize returns the page size q asks for: Limit, or MaxAuditPage when
// Limit is outside 1 to MaxAuditPage (the log is read, never refused).
func (q AuditQuery) PageSize() int {
	if q.Limit <= 0 || q.Limit > MaxAuditPage {
		return MaxAuditPage
	}
	return q.Limit
}
