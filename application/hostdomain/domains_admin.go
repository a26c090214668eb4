package hostdomain

import (
	"context"
	"strings"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// UpdateDomain is a platform administrator's change to a domain. At least
// one of its parts is set; Recheck and Verify exclude each other.
type UpdateDomain struct {
	// SetOrganization, when true, moves the domain to OrganizationID, or
	// detaches it from any organization when OrganizationID is "".
	SetOrganization bool
	OrganizationID  domain.OrganizationID
	// Recheck asks for a check now; a failed domain becomes pending with a
	// fresh verification window, and a domain verified by hand goes back to
	// DNS.
	Recheck bool
	// VerifyReason, when not nil, marks the domain verified by hand for
	// this reason (1 to 500 characters); DNS is not checked again until a
	// recheck is asked.
	VerifyReason *string
}

var (
	errDomainEmptyPatch = domain.Invalid("request.empty_patch", "Nothing to update",
		domain.FieldViolation{Field: "", Message: "must set organizationId, recheck: true or verify"})
	errDomainRecheckAndVerify = domain.Invalid("request.conflicting_fields", "recheck and verify exclude each other",
		domain.FieldViolation{Field: "verify", Message: "cannot be combined with recheck"})
	errDomainBadReason = domain.Invalid("request.invalid_reason", "Invalid reason",
		domain.FieldViolation{Field: "verify.reason", Message: "must be 1 to 500 characters"})
)

// Update applies a platform administrator's change to domain id, atomically,
// and returns the domain as changed. Anyone else is refused with 403
// auth.not_platform_admin. Audited as admin.update-domain, refusals included.
func (s *Domains) Update(ctx context.Context, req usecase.AdminRequest, id domain.DomainID, cmd UpdateDomain) (*domain.Domain, error) {
	var updated *domain.Domain
	err := func() error {
		if !s.admins.IsAdmin(req.Principal.User) {
			return domain.ErrNotPlatformAdmin
		}
		if err := checkUpdateDomain(cmd); err != nil {
			return err
		}
		if cmd.SetOrganization {
			if err := s.organizationExists(ctx, cmd.OrganizationID, "organizationId"); err != nil {
				return err
			}
		}
		err := s.domains.Update(ctx, id, func(d *domain.Domain) error {
			now := s.clock.Now()
			if cmd.SetOrganization {
				d.AssignOrganization(cmd.OrganizationID, now)
			}
			if cmd.Recheck {
				d.RequestCheck(now)
			}
			if cmd.VerifyReason != nil {
				if err := d.VerifyManually(*cmd.VerifyReason, now); err != nil {
					return errDomainBadReason
				}
			}
			updated = d
			return nil
		})
		return domainStoreErr(err, "organizationId")
	}()
	if err := s.audit.Record(ctx, req.Actor(), "admin.update-domain", domainTarget(id), err); err != nil {
		return nil, err
	}
	if cmd.Recheck {
		s.wakeVerifier()
	}
	return updated, nil
}

// checkUpdateDomain refuses an empty or contradictory change, and a reason
// out of bounds, before anything is read.
func checkUpdateDomain(cmd UpdateDomain) error {
	switch {
	case !cmd.SetOrganization && !cmd.Recheck && cmd.VerifyReason == nil:
		return errDomainEmptyPatch
	case cmd.Recheck && cmd.VerifyReason != nil:
		return errDomainRecheckAndVerify
	case cmd.VerifyReason != nil:
		r := strings.TrimSpace(*cmd.VerifyReason)
		if r == "" || len([]rune(r)) > domain.MaxManualReasonLength {
			return errDomainBadReason
		}
	}
	return nil
}
