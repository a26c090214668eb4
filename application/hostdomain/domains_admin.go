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
	t := domainTarget(id)
	err := func() error {
		if !s.isAdmin(req) {
			return domain.ErrNotPlatformAdmin
		}
		return checkUpdateDomain(cmd)
	}()
	if err != nil {
		return nil, s.audit.Record(ctx, req.Actor(), "admin.update-domain", t, err)
	}
	err = s.audit.Change(ctx, req.Actor(), "admin.update-domain", &t, func(ctx context.Context, emit usecase.Emit) error {
		if cmd.SetOrganization {
			if err := s.organizationExists(ctx, cmd.OrganizationID, "organizationId"); err != nil {
				return err
			}
		}
		var from domain.DomainStatus
		err := s.domains.Update(ctx, id, func(d *domain.Domain) error {
			now := s.clock.Now()
			from = d.Status()
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
		if err != nil {
			return domainStoreErr(err, "organizationId")
		}
		emitStatus(emit, from, updated)
		return s.covered(ctx, from, updated, cmd.SetOrganization)
	})
	if err != nil {
		return nil, err
	}
	if cmd.Recheck {
		s.wakeVerifier()
	}
	return updated, nil
}

// emitStatus emits d's status event when it turned verified or failed
// from another status.
func emitStatus(emit usecase.Emit, from domain.DomainStatus, d *domain.Domain) {
	switch to := d.Status(); {
	case to == from:
	case to == domain.DomainVerified:
		emit(domain.EventDomainVerified, d)
	case to == domain.DomainFailed:
		emit(domain.EventDomainFailed, d)
	}
}

// covered ends the sessions that "SSO required" covers from now on, when d
// turned verified or, verified, moved to another organization.
func (s *Domains) covered(ctx context.Context, from domain.DomainStatus, d *domain.Domain, moved bool) error {
	if s.sso == nil || d.Status() != domain.DomainVerified || (from == domain.DomainVerified && !moved) {
		return nil
	}
	return s.sso.DomainVerified(ctx, d)
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

// CreateAsAdmin is Create for a platform administrator (the console):
// the same rules and event, audited as admin.create-domain with the
// administrator as the actor; anyone else is refused with 403
// auth.not_platform_admin, and the refusal is recorded.
func (s *Domains) CreateAsAdmin(ctx context.Context, req usecase.AdminRequest, cmd CreateDomain) (*domain.Domain, error) {
	const action = "admin.create-domain"
	if !s.isAdmin(req) {
		return nil, s.audit.Record(ctx, req.Actor(), action, usecase.Target{Type: "domain"}, domain.ErrNotPlatformAdmin)
	}
	return s.create(ctx, req, action, cmd)
}

// DeleteAsAdmin is Delete for a platform administrator (the console),
// audited as admin.delete-domain, refusals included.
func (s *Domains) DeleteAsAdmin(ctx context.Context, req usecase.AdminRequest, id domain.DomainID) error {
	const action = "admin.delete-domain"
	if !s.isAdmin(req) {
		return s.audit.Record(ctx, req.Actor(), action, domainTarget(id), domain.ErrNotPlatformAdmin)
	}
	return s.delete(ctx, req, action, id)
}

// isAdmin reports whether req is a platform administrator's.
func (s *Domains) isAdmin(req usecase.AdminRequest) bool {
	return req.Principal.User != nil && s.admins.IsAdmin(req.Principal.User)
}
