package domain

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// OrganizationID identifies an Organization.
type OrganizationID string

// MemberID identifies a Member.
type MemberID string

// InvitationID identifies an Invitation.
type InvitationID string

// Limits on organization fields.
const (
	MaxSlugLength     = 64
	MaxLogoLength     = MaxPictureURLLength
	MaxMetadataLength = 8192
)

var slugPattern = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

// CheckSlug validates a slug: lower-case letters, digits and single hyphens
// between them, at most 64 characters, so it is safe in a URL as it is.
func CheckSlug(slug string) error {
	if len(slug) > MaxSlugLength || !slugPattern.MatchString(slug) {
		return Invalid("organization.invalid_slug", "Invalid slug", FieldViolation{Field: "slug",
			Message: "must be 1 to 64 lower-case letters, digits and single hyphens, not starting or ending with a hyphen"})
	}
	return nil
}

// CheckMetadata validates metadata: empty, or a JSON object of at most 8 KiB.
func CheckMetadata(metadata string, location string) error {
	if metadata == "" {
		return nil
	}
	if len(metadata) > MaxMetadataLength || !json.Valid([]byte(metadata)) || !strings.HasPrefix(strings.TrimSpace(metadata), "{") {
		return Invalid("organization.invalid_metadata", "Invalid metadata", FieldViolation{Field: location, Message: "must be a JSON object of at most 8192 bytes"})
	}
	return nil
}

// Organization is a group of users: a team or a customer of the platform.
type Organization struct {
	id        OrganizationID
	name      string
	slug      string
	logo      string
	metadata  string // a JSON object as text, or ""
	createdAt time.Time
	updatedAt time.Time
	// requireTwoFactor says that members must have a second factor
	// (two-factor or a passkey) to act in the organization.
	requireTwoFactor bool
}

// NewOrganization returns a valid organization created at now.
func NewOrganization(id OrganizationID, name, slug, logo, metadata string, now time.Time) (*Organization, error) {
	if id == "" {
		return nil, Internal("domain.NewOrganization", errEmptyID)
	}
	now = Timestamp(now)
	o := &Organization{id: id, createdAt: now, updatedAt: now}
	if err := o.Rename(name, now); err != nil {
		return nil, err
	}
	if err := o.SetSlug(slug, now); err != nil {
		return nil, err
	}
	if err := o.SetLogo(logo, now); err != nil {
		return nil, err
	}
	if err := o.SetMetadata(metadata, now); err != nil {
		return nil, err
	}
	return o, nil
}

// RehydrateOrganization rebuilds a stored organization. Only storage adapters call it.
func RehydrateOrganization(id OrganizationID, name, slug, logo, metadata string, requireTwoFactor bool, createdAt, updatedAt time.Time) *Organization {
	return &Organization{id: id, name: name, slug: slug, logo: logo, metadata: metadata, requireTwoFactor: requireTwoFactor,
		createdAt: Timestamp(createdAt), updatedAt: Timestamp(updatedAt)}
}

// ID returns the identifier.
func (o *Organization) ID() OrganizationID { return o.id }

// Name returns the display name.
func (o *Organization) Name() string { return o.name }

// Slug returns the unique URL name.
func (o *Organization) Slug() string { return o.slug }

// Logo returns the logo URL, or "".
func (o *Organization) Logo() string { return o.logo }

// Metadata returns the metadata as JSON object text, or "".
func (o *Organization) Metadata() string { return o.metadata }

// CreatedAt returns when the organization was created.
func (o *Organization) CreatedAt() time.Time { return o.createdAt }

// UpdatedAt returns when the organization was last changed.
func (o *Organization) UpdatedAt() time.Time { return o.updatedAt }

// Rename sets the name: trimmed, 1 to MaxNameLength characters, without
// direction controls (IsBidiControl).
func (o *Organization) Rename(name string, now time.Time) error {
	name = strings.TrimSpace(name)
	if name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxNameLength {
		return Invalid("organization.invalid_name", "Invalid name", FieldViolation{Field: "name", Message: "must be 1 to 256 characters"})
	}
	if HasBidiControl(name) {
		return Invalid("organization.invalid_name", "Invalid name", FieldViolation{Field: "name", Message: bidiMessage})
	}
	o.name = name
	o.updatedAt = Timestamp(now)
	return nil
}

// SetSlug sets the slug (see CheckSlug). Uniqueness is storage's to enforce.
func (o *Organization) SetSlug(slug string, now time.Time) error {
	if err := CheckSlug(slug); err != nil {
		return err
	}
	o.slug = slug
	o.updatedAt = Timestamp(now)
	return nil
}

// SetLogo sets the logo URL, or clears it with "": an absolute http or
// https URL of at most MaxLogoLength bytes (checkPictureURL, the rule of a
// user's image).
func (o *Organization) SetLogo(logo string, now time.Time) error {
	logo, err := checkPictureURL(logo, "organization.invalid_logo", "logo")
	if err != nil {
		return err
	}
	o.logo = logo
	o.updatedAt = Timestamp(now)
	return nil
}

// RequiresTwoFactor reports whether members must have a second factor
// (two-factor or a passkey) to act in the organization.
func (o *Organization) RequiresTwoFactor() bool { return o.requireTwoFactor }

// SetRequireTwoFactor turns the organization's second-factor rule on or off.
func (o *Organization) SetRequireTwoFactor(on bool, now time.Time) {
	o.requireTwoFactor = on
	o.updatedAt = Timestamp(now)
}

// SetMetadata sets or clears the metadata (see CheckMetadata).
func (o *Organization) SetMetadata(metadata string, now time.Time) error {
	if err := CheckMetadata(metadata, "metadata"); err != nil {
		return err
	}
	o.metadata = metadata
	o.updatedAt = Timestamp(now)
	return nil
}

// Member is a user's membership of an organization, with their roles there.
type Member struct {
	id             MemberID
	organizationID OrganizationID
	userID         UserID
	roles          []OrgRole
	createdAt      time.Time
}

// NewMember returns a membership of userID in org with roles, which must be known.
func NewMember(id MemberID, org OrganizationID, userID UserID, roles []OrgRole, now time.Time) (*Member, error) {
	m := &Member{id: id, organizationID: org, userID: userID, createdAt: Timestamp(now)}
	if err := m.SetRoles(roles); err != nil {
		return nil, err
	}
	return m, nil
}

// RehydrateMember rebuilds a stored membership. Only storage adapters call it.
func RehydrateMember(id MemberID, org OrganizationID, userID UserID, roles []OrgRole, createdAt time.Time) *Member {
	return &Member{id: id, organizationID: org, userID: userID, roles: slices.Clone(roles), createdAt: Timestamp(createdAt)}
}

// ID returns the identifier.
func (m *Member) ID() MemberID { return m.id }

// OrganizationID returns the organization.
func (m *Member) OrganizationID() OrganizationID { return m.organizationID }

// UserID returns the member's user.
func (m *Member) UserID() UserID { return m.userID }

// Roles returns the member's roles in the organization.
func (m *Member) Roles() []OrgRole { return slices.Clone(m.roles) }

// IsOwner reports whether the member holds the owner role.
func (m *Member) IsOwner() bool { return slices.Contains(m.roles, OrgRoleOwner) }

// CreatedAt returns when the user joined.
func (m *Member) CreatedAt() time.Time { return m.createdAt }

// Allows reports whether the member's roles grant every requested action.
func (m *Member) Allows(requested Permissions) bool { return OrgRolesAllow(m.roles, requested) }

// SetRoles replaces the member's roles; each must be a known role.
func (m *Member) SetRoles(roles []OrgRole) error {
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = string(r)
	}
	clean, err := ParseOrgRoles(names)
	if err != nil {
		return err
	}
	m.roles = clean
	return nil
}

// InvitationStatus is where an invitation stands.
type InvitationStatus string

// The invitation statuses (Better Auth's).
const (
	InvitationPending  InvitationStatus = "pending"
	InvitationAccepted InvitationStatus = "accepted"
	InvitationRejected InvitationStatus = "rejected"
	InvitationCanceled InvitationStatus = "canceled"
)

// Invitation asks the owner of an address to join an organization.
type Invitation struct {
	id             InvitationID
	organizationID OrganizationID
	email          Email
	roles          []OrgRole
	status         InvitationStatus
	inviterID      UserID
	expiresAt      time.Time
	createdAt      time.Time
	updatedAt      time.Time
}

// NewInvitation returns a pending invitation that expires after ttl. inviter
// is the member who sent it, or "" when no user did (a trusted backend).
func NewInvitation(id InvitationID, org OrganizationID, email Email, roles []OrgRole, inviter UserID, ttl time.Duration, now time.Time) (*Invitation, error) {
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = string(r)
	}
	clean, err := ParseOrgRoles(names)
	if err != nil {
		return nil, err
	}
	now = Timestamp(now)
	return &Invitation{
		id: id, organizationID: org, email: email, roles: clean, status: InvitationPending, inviterID: inviter,
		expiresAt: Timestamp(now.Add(ttl)), createdAt: now, updatedAt: now,
	}, nil
}

// RehydrateInvitation rebuilds a stored invitation. Only storage adapters call it.
func RehydrateInvitation(id InvitationID, org OrganizationID, email Email, roles []OrgRole, status InvitationStatus, inviter UserID, expiresAt, createdAt, updatedAt time.Time) *Invitation {
	return &Invitation{
		id: id, organizationID: org, email: email, roles: slices.Clone(roles), status: status, inviterID: inviter,
		expiresAt: Timestamp(expiresAt), createdAt: Timestamp(createdAt), updatedAt: Timestamp(updatedAt),
	}
}

// ID returns the identifier.
func (i *Invitation) ID() InvitationID { return i.id }

// OrganizationID returns the organization the invitation is to.
func (i *Invitation) OrganizationID() OrganizationID { return i.organizationID }

// Email returns the invited address.
func (i *Invitation) Email() Email { return i.email }

// Roles returns the roles the invitee gets on accepting.
func (i *Invitation) Roles() []OrgRole { return slices.Clone(i.roles) }

// Status returns the stored status (an expired invitation is still "pending").
func (i *Invitation) Status() InvitationStatus { return i.status }

// InviterID returns who sent the invitation: "" when no user did (a
// trusted backend) or once the inviting user is deleted.
func (i *Invitation) InviterID() UserID { return i.inviterID }

// ExpiresAt returns when the invitation stops working.
func (i *Invitation) ExpiresAt() time.Time { return i.expiresAt }

// CreatedAt returns when it was sent.
func (i *Invitation) CreatedAt() time.Time { return i.createdAt }

// UpdatedAt returns when its status last changed.
func (i *Invitation) UpdatedAt() time.Time { return i.updatedAt }

// IsOpen reports whether the invitation can still be answered at now.
func (i *Invitation) IsOpen(now time.Time) bool {
	return i.status == InvitationPending && now.Before(i.expiresAt)
}

// ErrInvitationNotOpen refuses to answer an invitation that was already
// answered or has expired. Its code is Better Auth's, which also answers an
// unknown invitation so; a store's missing invitation is the distinct
// domain.ErrInvitationNotFound.
var ErrInvitationNotOpen = NewError(KindInvalid, "invitation.not_open", "Invitation not found")

// Answer moves an open invitation to accepted, rejected or canceled.
func (i *Invitation) Answer(status InvitationStatus, now time.Time) error {
	if !i.IsOpen(now) {
		return ErrInvitationNotOpen
	}
	switch status {
	case InvitationAccepted, InvitationRejected, InvitationCanceled:
	default:
		return Internal("domain.Invitation.Answer", constError("bad status "+string(status)))
	}
	i.status = status
	i.updatedAt = Timestamp(now)
	return nil
}

// Renew pushes the expiry of a pending invitation to now plus ttl (a resend).
func (i *Invitation) Renew(roles []OrgRole, ttl time.Duration, now time.Time) {
	i.roles = slices.Clone(roles)
	i.expiresAt = Timestamp(now.Add(ttl))
	i.updatedAt = Timestamp(now)
}

// The errors the stores return for this aggregate, created once so that
// every store answers each condition with the same kind, code and message.
// The stores' codes are distinct from the organization use cases' own
// (organization.already_exists, organization.no_such_member, …), which are
// of kind KindInvalid as Better Auth answers them: one code, one kind. The
// use cases turn these into theirs; the trusted API maps them to its
// problem codes.
var (
	// ErrOrganizationNotFound is a missing organization (KindNotFound).
	ErrOrganizationNotFound = NewError(KindNotFound, "organization.unknown", "Organization not found")
	// ErrOrganizationExists is Create with a taken slug or id (KindConflict).
	ErrOrganizationExists = NewError(KindConflict, "organization.exists", "Organization already exists")
	// ErrSlugTaken is Update to a slug another organization has (KindConflict).
	ErrSlugTaken = NewError(KindConflict, "organization.slug_taken", "Organization slug already taken")
	// ErrMemberNotFound is a missing member (KindNotFound).
	ErrMemberNotFound = NewError(KindNotFound, "organization.member_not_found", "Member not found")
	// ErrAlreadyMember is adding a user who is already a member (KindConflict).
	ErrAlreadyMember = NewError(KindConflict, "organization.already_member", "User is already a member of this organization")
	// ErrInvitationNotFound is a missing invitation (KindNotFound).
	ErrInvitationNotFound = NewError(KindNotFound, "organization.invitation_not_found", "Invitation not found")
	// ErrInvitationExists is CreateInvitation with a taken id (KindConflict).
	ErrInvitationExists = NewError(KindConflict, "invitation.exists", "an invitation with this id already exists")
	// ErrLastOwner refuses a change that would leave an organization without
	// an owner (Better Auth's code for it).
	ErrLastOwner = NewError(KindInvalid, "organization.owner_required", "You cannot leave the organization without an owner")
)
