package ports

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// OrganizationRepository stores organizations with their members and
// invitations. Implementations are safe for concurrent use and return
// copies. Deleting an organization deletes its members and invitations and
// clears it as any session's active organization; deleting a user deletes
// their memberships.
//
// Every change to an organization's members runs under a per-organization
// lock (SELECT … FOR UPDATE on the organization row in PostgreSQL). Two rules
// live in the store because only that lock makes them hold under
// concurrency, and the conformance suite tests both on every store:
//   - an organization keeps at least one owner: UpdateMember and
//     RemoveMember refuse a change that would leave none with ErrLastOwner;
//   - AcceptInvitation answers the invitation and adds the member together.
//
// Every other rule (the limits on organizations per user, members and open
// invitations, who may do what) is the use cases', checked before the
// change and not under this lock: requests racing one another may each pass
// a limit that only one of them should.
type OrganizationRepository interface {
	// Create stores org with owner as its first member, atomically. A taken
	// slug or id is ErrOrganizationExists (domain.KindConflict); a missing
	// user is domain.KindNotFound.
	Create(ctx context.Context, org *domain.Organization, owner *domain.Member) error
	// Get returns the organization id, or an error of kind domain.KindNotFound.
	Get(ctx context.Context, id domain.OrganizationID) (*domain.Organization, error)
	// GetBySlug returns the organization with slug, or domain.KindNotFound.
	GetBySlug(ctx context.Context, slug string) (*domain.Organization, error)
	// SlugTaken reports whether an organization has slug.
	SlugTaken(ctx context.Context, slug string) (bool, error)
	// Update loads the organization, applies fn and saves it atomically. A
	// slug taken by another organization is ErrSlugTaken
	// (domain.KindConflict); a missing organization ErrOrganizationNotFound.
	Update(ctx context.Context, id domain.OrganizationID, fn func(o *domain.Organization) error) error
	// Delete removes the organization and everything it owns.
	Delete(ctx context.Context, id domain.OrganizationID) error
	// ListByUser returns the organizations userID is a member of, oldest
	// membership first.
	ListByUser(ctx context.Context, userID domain.UserID) ([]*domain.Organization, error)
	// List returns one page of every organization with its member count,
	// newest first (created_at, then id compared byte by byte, both
	// descending). It reads through the index on (created_at, id) from
	// q.After, and the counts are kept with the organizations, so every page
	// costs the same however many organizations there are and however deep
	// the page. A limit outside 1 to 1000 is domain.KindInvalid.
	List(ctx context.Context, q OrganizationQuery) (OrganizationPage, error)
	// Count returns how many organizations there are, in one statement.
	Count(ctx context.Context) (int, error)

	// AddMember stores m. The user already being a member is
	// ErrAlreadyMember (domain.KindConflict); a missing organization or user
	// is domain.KindNotFound.
	AddMember(ctx context.Context, m *domain.Member) error
	// GetMember returns the member id of org, or ErrMemberNotFound.
	GetMember(ctx context.Context, org domain.OrganizationID, id domain.MemberID) (*domain.Member, error)
	// GetMemberByUser returns userID's membership of org, or
	// domain.KindNotFound. One indexed lookup: it guards every organization route.
	GetMemberByUser(ctx context.Context, org domain.OrganizationID, userID domain.UserID) (*domain.Member, error)
	// ListMembers returns one page of org's members with their users, in
	// q's order, how many members org has, and where the next page starts.
	// A page read from a cursor (q.After) reads through the index on
	// (organization_id, created_at, id) from that position, and the total is
	// a count kept with the members, so such a page costs the same in an
	// organization of ten members and of ten thousand; a page read from an
	// offset also steps over the members it skips. A bad page (see
	// MemberQuery) is an error of kind domain.KindInvalid.
	ListMembers(ctx context.Context, org domain.OrganizationID, q MemberQuery) (MemberPage, error)
	// UpdateMember loads the member, applies fn and saves it, under the
	// organization's lock. If the change would leave org without an owner
	// nothing is saved and the error is ErrLastOwner.
	UpdateMember(ctx context.Context, org domain.OrganizationID, id domain.MemberID, fn func(m *domain.Member) error) error
	// RemoveMember deletes the member under the organization's lock and
	// returns it. Removing the last owner is refused with ErrLastOwner.
	RemoveMember(ctx context.Context, org domain.OrganizationID, id domain.MemberID) (*domain.Member, error)
	// CountMembers returns how many members org has (0 for a missing
	// organization), from a count kept in step with every membership added or
	// removed, by whatever means (deleting a user included): it costs the
	// same however many members org has.
	CountMembers(ctx context.Context, org domain.OrganizationID) (int, error)

	// CreateInvitation stores inv. A missing organization is domain.KindNotFound.
	CreateInvitation(ctx context.Context, inv *domain.Invitation) error
	// GetInvitation returns the invitation id, or ErrInvitationNotFound.
	GetInvitation(ctx context.Context, id domain.InvitationID) (*domain.Invitation, error)
	// UpdateInvitation loads the invitation, applies fn and saves it atomically.
	UpdateInvitation(ctx context.Context, id domain.InvitationID, fn func(inv *domain.Invitation) error) error
	// AcceptInvitation applies fn to the invitation and adds m, in one
	// transaction under the organization's lock: either both happen or
	// neither. fn returning an error (such as domain.ErrInvitationNotOpen)
	// saves nothing.
	AcceptInvitation(ctx context.Context, id domain.InvitationID, fn func(inv *domain.Invitation) error, m *domain.Member) error
	// ListInvitations returns org's invitations, newest first.
	ListInvitations(ctx context.Context, org domain.OrganizationID) ([]*domain.Invitation, error)
	// ListPendingInvitationsByEmail returns the invitations to email that are
	// pending and unexpired at now, newest first.
	ListPendingInvitationsByEmail(ctx context.Context, email domain.Email, now time.Time) ([]*domain.Invitation, error)
	// FindPendingInvitation returns the newest invitation of email to org
	// that is pending and unexpired at now, or domain.KindNotFound.
	FindPendingInvitation(ctx context.Context, org domain.OrganizationID, email domain.Email, now time.Time) (*domain.Invitation, error)
	// CountPendingInvitations returns how many of org's invitations are
	// pending and unexpired at now.
	CountPendingInvitations(ctx context.Context, org domain.OrganizationID, now time.Time) (int, error)
}

// MemberWithUser is a membership and the user it belongs to.
type MemberWithUser struct {
	Member *domain.Member
	User   *domain.User
}

// MemberQuery pages an organization's members.
type MemberQuery struct {
	// SortDesc lists the newest members first; the default is oldest first.
	// Ties in joining time are broken by member id, compared byte by byte.
	SortDesc bool
	// Limit is the page size (1 to 1000); Offset skips that many members.
	Limit  int
	Offset int
	// After, when set, starts the page strictly after this position in the
	// query's order (after it in joining order, or before it with SortDesc),
	// whether or not a member is still there. Offset must then be 0: a store
	// refuses an offset with a cursor as it refuses a bad limit or a negative
	// offset, with an error of kind domain.KindInvalid.
	After *MemberCursor
}

// MemberCursor is a position in an organization's members: the joining
// time and id of a member.
type MemberCursor struct {
	CreatedAt time.Time
	ID        domain.MemberID
}

// MemberPage is one page of an organization's members.
type MemberPage struct {
	Members []MemberWithUser
	// Total is how many members the organization has.
	Total int
	// Next is the position of the page's last member when more members
	// follow it in the query's order, and nil on the last page: a query with
	// After set to it reads the next page.
	Next *MemberCursor
}

// OrganizationQuery pages every organization, newest first.
type OrganizationQuery struct {
	// Limit is the page size (1 to 1000).
	Limit int
	// After, when set, starts the page strictly after this position
	// (creation time and id) in newest-first order, whether or not an
	// organization is still there.
	After *domain.Position
	// Contains, when set, keeps the organizations whose name or slug
	// contains it, case folded (ASCII at least); the page then scans.
	Contains string
}

// OrganizationWithCount is an organization and how many members it has.
type OrganizationWithCount struct {
	Organization *domain.Organization
	MemberCount  int
}

// OrganizationPage is one page of organizations.
type OrganizationPage struct {
	Organizations []OrganizationWithCount
	// Next is the position of the page's last organization when more
	// follow it, and nil on the last page.
	Next *domain.Position
}
