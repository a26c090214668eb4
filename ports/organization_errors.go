package ports

import "github.com/gatehouse/gatehouse/domain"

// The errors an OrganizationRepository returns, created here once so that
// every store answers each condition with the same kind and code. The
// stores' codes are distinct from the organization use cases' own
// (organization.already_exists, organization.no_such_member, …), which are
// of kind domain.KindInvalid as Better Auth answers them: one code, one
// kind. The use cases turn these into theirs; the trusted API maps them to
// its problem codes.
var (
	// ErrOrganizationNotFound is a missing organization (domain.KindNotFound).
	ErrOrganizationNotFound = domain.NewError(domain.KindNotFound, "organization.unknown", "Organization not found")
	// ErrOrganizationExists is Create with a taken slug or id (domain.KindConflict).
	ErrOrganizationExists = domain.NewError(domain.KindConflict, "organization.exists", "Organization already exists")
	// ErrSlugTaken is Update to a slug another organization has (domain.KindConflict).
	ErrSlugTaken = domain.NewError(domain.KindConflict, "organization.slug_taken", "Organization slug already taken")
	// ErrMemberNotFound is a missing member (domain.KindNotFound).
	ErrMemberNotFound = domain.NewError(domain.KindNotFound, "organization.member_not_found", "Member not found")
	// ErrAlreadyMember is adding a user who is already a member (domain.KindConflict).
	ErrAlreadyMember = domain.NewError(domain.KindConflict, "organization.already_member", "User is already a member of this organization")
	// ErrInvitationNotFound is a missing invitation (domain.KindNotFound).
	ErrInvitationNotFound = domain.NewError(domain.KindNotFound, "organization.invitation_not_found", "Invitation not found")
	// ErrInvitationExists is CreateInvitation with a taken id (domain.KindConflict).
	ErrInvitationExists = domain.NewError(domain.KindConflict, "invitation.exists", "an invitation with this id already exists")
	// ErrLastOwner refuses a change that would leave an organization without
	// an owner (Better Auth's code for it).
	ErrLastOwner = domain.NewError(domain.KindInvalid, "organization.owner_required", "You cannot leave the organization without an owner")
)
