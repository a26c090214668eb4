package memory

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.OrganizationRepository = (*OrganizationRepository)(nil)

// OrganizationRepository keeps organizations, members and invitations in
// the shared DB. Every change runs under the DB's write lock, which is also
// the per-organization lock the port asks for.
type OrganizationRepository struct {
	db *DB
}

// NewOrganizationRepository returns an OrganizationRepository on db.
func NewOrganizationRepository(db *DB) *OrganizationRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &OrganizationRepository{db: db}
}

// orgUser keys a membership by organization and user, the unique pair of
// the SQL stores' members_organization_id_user_id_key.
type orgUser struct {
	org  domain.OrganizationID
	user domain.UserID
}

var errMemberOfAnotherOrg = errors.New("the member belongs to another organization")

// The copies go through the Rehydrate functions, which clone the role slices.

func copyOrganization(o *domain.Organization) *domain.Organization {
	return domain.RehydrateOrganization(o.ID(), o.Name(), o.Slug(), o.Logo(), o.Metadata(), o.RequiresTwoFactor(), o.CreatedAt(), o.UpdatedAt())
}

func copyMember(m *domain.Member) *domain.Member {
	return domain.RehydrateMember(m.ID(), m.OrganizationID(), m.UserID(), m.Roles(), m.CreatedAt())
}

func copyInvitation(inv *domain.Invitation) *domain.Invitation {
	return domain.RehydrateInvitation(inv.ID(), inv.OrganizationID(), inv.Email(), inv.Roles(), inv.Status(), inv.InviterID(),
		inv.ExpiresAt(), inv.CreatedAt(), inv.UpdatedAt())
}

// compareMembers orders memberships by joining time, ties broken by id.
func compareMembers(a, b *domain.Member) int {
	if c := a.CreatedAt().Compare(b.CreatedAt()); c != 0 {
		return c
	}
	return strings.Compare(string(a.ID()), string(b.ID()))
}

// compareInvitationsNewestFirst orders invitations newest first, ties
// broken by id, the order the SQL stores use.
func compareInvitationsNewestFirst(a, b *domain.Invitation) int {
	if c := b.CreatedAt().Compare(a.CreatedAt()); c != 0 {
		return c
	}
	return strings.Compare(string(b.ID()), string(a.ID()))
}

// insertMember stores a copy of m, as the SQL insert would: a duplicate
// before a missing user. The caller holds the write lock and has checked
// the organization.
func (db *DB) insertMember(m *domain.Member) error {
	key := orgUser{m.OrganizationID(), m.UserID()}
	if _, ok := db.members[m.ID()]; ok {
		return domain.ErrAlreadyMember
	}
	if _, ok := db.memberByOrgUser[key]; ok {
		return domain.ErrAlreadyMember
	}
	if !db.hasUser(m.UserID()) {
		return domain.ErrUserNotFound
	}
	set(db, db.members, m.ID(), copyMember(m))
	set(db, db.memberByOrgUser, key, m.ID())
	ids := db.membersByOrg[m.OrganizationID()]
	if ids == nil {
		ids = map[domain.MemberID]struct{}{}
		set(db, db.membersByOrg, m.OrganizationID(), ids)
	}
	set(db, ids, m.ID(), struct{}{})
	return nil
}

// deleteMember removes m and its index entries: every removal of a member
// (RemoveMember, deleting its organization or its user) goes through here.
func (db *DB) deleteMember(m *domain.Member) {
	unset(db, db.memberByOrgUser, orgUser{m.OrganizationID(), m.UserID()})
	unset(db, db.members, m.ID())
	if ids := db.membersByOrg[m.OrganizationID()]; ids != nil {
		unset(db, ids, m.ID())
		if len(ids) == 0 {
			unset(db, db.membersByOrg, m.OrganizationID())
		}
	}
}

// deleteMemberships removes the user's memberships and clears them as the
// inviter of invitations, as the SQL foreign keys do (ON DELETE CASCADE and
// SET NULL). deleteUser calls it with the write lock held.
func (db *DB) deleteMemberships(userID domain.UserID) {
	for _, m := range db.members {
		if m.UserID() == userID {
			db.deleteMember(m)
		}
	}
	for id, inv := range db.invitations {
		if inv.InviterID() == userID {
			set(db, db.invitations, id, domain.RehydrateInvitation(inv.ID(), inv.OrganizationID(), inv.Email(), inv.Roles(), inv.Status(), "",
				inv.ExpiresAt(), inv.CreatedAt(), inv.UpdatedAt()))
		}
	}
}

// member returns member id of org. The caller holds the lock.
func (db *DB) member(org domain.OrganizationID, id domain.MemberID) (*domain.Member, error) {
	m, ok := db.members[id]
	if !ok || m.OrganizationID() != org {
		return nil, domain.ErrMemberNotFound
	}
	return m, nil
}

// hasOtherOwner reports whether a member of org other than except is an
// owner. The caller holds the lock.
func (db *DB) hasOtherOwner(org domain.OrganizationID, except domain.MemberID) bool {
	for id := range db.membersByOrg[org] {
		if id != except && db.members[id].IsOwner() {
			return true
		}
	}
	return false
}

// Create implements ports.OrganizationRepository. Everything is checked
// before anything is stored, so a failure leaves nothing behind.
func (r *OrganizationRepository) Create(ctx context.Context, org *domain.Organization, owner *domain.Member) error {
	if owner.OrganizationID() != org.ID() {
		return domain.Internal("memory: organizations.create", errMemberOfAnotherOrg)
	}
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.organizations[org.ID()]; ok {
		return domain.ErrOrganizationExists
	}
	if _, ok := r.db.organizationBySlug[org.Slug()]; ok {
		return domain.ErrOrganizationExists
	}
	if _, ok := r.db.members[owner.ID()]; ok {
		return domain.ErrAlreadyMember
	}
	if !r.db.hasUser(owner.UserID()) {
		return domain.ErrUserNotFound
	}
	set(r.db, r.db.organizations, org.ID(), copyOrganization(org))
	set(r.db, r.db.organizationBySlug, org.Slug(), org.ID())
	if err := r.db.insertMember(owner); err != nil {
		unset(r.db, r.db.organizationBySlug, org.Slug())
		unset(r.db, r.db.organizations, org.ID())
		return err
	}
	return nil
}

// Get implements ports.OrganizationRepository.
func (r *OrganizationRepository) Get(ctx context.Context, id domain.OrganizationID) (*domain.Organization, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	o, ok := r.db.organizations[id]
	if !ok {
		return nil, domain.ErrOrganizationNotFound
	}
	return copyOrganization(o), nil
}

// GetBySlug implements ports.OrganizationRepository.
func (r *OrganizationRepository) GetBySlug(ctx context.Context, slug string) (*domain.Organization, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	id, ok := r.db.organizationBySlug[slug]
	if !ok {
		return nil, domain.ErrOrganizationNotFound
	}
	return copyOrganization(r.db.organizations[id]), nil
}

// SlugTaken implements ports.OrganizationRepository.
func (r *OrganizationRepository) SlugTaken(ctx context.Context, slug string) (bool, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	_, ok := r.db.organizationBySlug[slug]
	return ok, nil
}

// Update implements ports.OrganizationRepository.
func (r *OrganizationRepository) Update(ctx context.Context, id domain.OrganizationID, fn func(o *domain.Organization) error) error {
	defer r.db.unlock(r.db.lock(ctx))
	stored, ok := r.db.organizations[id]
	if !ok {
		return domain.ErrOrganizationNotFound
	}
	o := copyOrganization(stored)
	if err := fn(o); err != nil {
		return err
	}
	if o.Slug() != stored.Slug() {
		if _, taken := r.db.organizationBySlug[o.Slug()]; taken {
			return domain.ErrSlugTaken
		}
		unset(r.db, r.db.organizationBySlug, stored.Slug())
		set(r.db, r.db.organizationBySlug, o.Slug(), id)
	}
	set(r.db, r.db.organizations, id, o)
	return nil
}

// Delete implements ports.OrganizationRepository: its members, invitations,
// identity providers and domains go with it, and no session keeps it as its
// active one.
func (r *OrganizationRepository) Delete(ctx context.Context, id domain.OrganizationID) error {
	defer r.db.unlock(r.db.lock(ctx))
	o, ok := r.db.organizations[id]
	if !ok {
		return domain.ErrOrganizationNotFound
	}
	for memberID := range r.db.membersByOrg[id] {
		r.db.deleteMember(r.db.members[memberID])
	}
	for invID, inv := range r.db.invitations {
		if inv.OrganizationID() == id {
			unset(r.db, r.db.invitations, invID)
		}
	}
	r.db.clearActiveOrganization(id)
	r.db.deleteOrganizationProviders(id)
	r.db.deleteOrganizationDomains(id)
	unset(r.db, r.db.organizationBySlug, o.Slug())
	unset(r.db, r.db.organizations, id)
	return nil
}

// ListByUser implements ports.OrganizationRepository.
func (r *OrganizationRepository) ListByUser(ctx context.Context, userID domain.UserID) ([]*domain.Organization, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	var mine []*domain.Member
	for _, m := range r.db.members {
		if m.UserID() == userID {
			mine = append(mine, m)
		}
	}
	slices.SortFunc(mine, compareMembers)
	out := make([]*domain.Organization, 0, len(mine))
	for _, m := range mine {
		out = append(out, copyOrganization(r.db.organizations[m.OrganizationID()]))
	}
	return out, nil
}

// compareOrganizationsNewestFirst orders organizations newest first, ties
// broken by id, byte by byte, as the SQL stores order them.
func compareOrganizationsNewestFirst(a, b *domain.Organization) int {
	if c := b.CreatedAt().Compare(a.CreatedAt()); c != 0 {
		return c
	}
	return strings.Compare(string(b.ID()), string(a.ID()))
}

// List implements ports.OrganizationRepository. It sorts every organization
// for each page: the memory store serves tests and development.
func (r *OrganizationRepository) List(ctx context.Context, q ports.OrganizationQuery) (ports.OrganizationPage, error) {
	if err := q.Validate(); err != nil {
		return ports.OrganizationPage{}, err
	}
	defer r.db.runlock(r.db.rlock(ctx))
	all := make([]*domain.Organization, 0, len(r.db.organizations))
	part := strings.ToLower(q.Contains)
	for _, o := range r.db.organizations {
		if part == "" || strings.Contains(strings.ToLower(o.Name()), part) || strings.Contains(o.Slug(), part) {
			all = append(all, o)
		}
	}
	slices.SortFunc(all, compareOrganizationsNewestFirst)
	start := 0
	if q.After != nil {
		// The first organization strictly after the position, newest first.
		at := domain.Timestamp(q.After.At)
		start, _ = slices.BinarySearchFunc(all, q.After.ID, func(o *domain.Organization, id string) int {
			c := at.Compare(o.CreatedAt())
			if c == 0 {
				c = strings.Compare(id, string(o.ID()))
			}
			if c <= 0 {
				return -1 // o is at or before the position
			}
			return 1
		})
	}
	end := min(start+q.Limit, len(all))
	page := ports.OrganizationPage{Organizations: make([]ports.OrganizationWithCount, 0, end-start)}
	for _, o := range all[start:end] {
		page.Organizations = append(page.Organizations, ports.OrganizationWithCount{Organization: copyOrganization(o), MemberCount: len(r.db.membersByOrg[o.ID()])})
	}
	if end < len(all) {
		last := all[end-1]
		page.Next = &domain.Position{At: last.CreatedAt(), ID: string(last.ID())}
	}
	return page, nil
}

// AddMember implements ports.OrganizationRepository.
func (r *OrganizationRepository) AddMember(ctx context.Context, m *domain.Member) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.organizations[m.OrganizationID()]; !ok {
		return domain.ErrOrganizationNotFound
	}
	return r.db.insertMember(m)
}

// GetMember implements ports.OrganizationRepository.
func (r *OrganizationRepository) GetMember(ctx context.Context, org domain.OrganizationID, id domain.MemberID) (*domain.Member, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	m, err := r.db.member(org, id)
	if err != nil {
		return nil, err
	}
	return copyMember(m), nil
}

// GetMemberByUser implements ports.OrganizationRepository.
func (r *OrganizationRepository) GetMemberByUser(ctx context.Context, org domain.OrganizationID, userID domain.UserID) (*domain.Member, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	id, ok := r.db.memberByOrgUser[orgUser{org, userID}]
	if !ok {
		return nil, domain.ErrMemberNotFound
	}
	return copyMember(r.db.members[id]), nil
}

// ListMembers implements ports.OrganizationRepository. It sorts the
// organization's members (not every membership) for each page: the memory
// store serves tests and development.
func (r *OrganizationRepository) ListMembers(ctx context.Context, org domain.OrganizationID, q ports.MemberQuery) (ports.MemberPage, error) {
	if err := q.Validate(); err != nil {
		return ports.MemberPage{}, err
	}
	defer r.db.runlock(r.db.rlock(ctx))
	ids := r.db.membersByOrg[org]
	all := make([]*domain.Member, 0, len(ids))
	for id := range ids {
		all = append(all, r.db.members[id])
	}
	slices.SortFunc(all, compareMembers)
	if q.SortDesc {
		slices.Reverse(all)
	}
	start := min(q.Offset, len(all))
	if q.After != nil {
		// The first member strictly after the position in the query's order.
		at := domain.Timestamp(q.After.CreatedAt)
		start, _ = slices.BinarySearchFunc(all, q.After.ID, func(m *domain.Member, id domain.MemberID) int {
			c := m.CreatedAt().Compare(at)
			if c == 0 {
				c = strings.Compare(string(m.ID()), string(id))
			}
			if q.SortDesc {
				c = -c
			}
			if c <= 0 {
				return -1 // m is at or before the position
			}
			return 1
		})
	}
	end := min(start+q.Limit, len(all))
	page := ports.MemberPage{Members: make([]ports.MemberWithUser, 0, end-start), Total: len(all)}
	for _, m := range all[start:end] {
		page.Members = append(page.Members, ports.MemberWithUser{Member: copyMember(m), User: copyUser(r.db.users[m.UserID()])})
	}
	if end < len(all) {
		last := all[end-1]
		page.Next = &ports.MemberCursor{CreatedAt: last.CreatedAt(), ID: last.ID()}
	}
	return page, nil
}

// UpdateMember implements ports.OrganizationRepository.
func (r *OrganizationRepository) UpdateMember(ctx context.Context, org domain.OrganizationID, id domain.MemberID, fn func(m *domain.Member) error) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.organizations[org]; !ok {
		return domain.ErrOrganizationNotFound
	}
	stored, err := r.db.member(org, id)
	if err != nil {
		return err
	}
	m := copyMember(stored)
	if err := fn(m); err != nil {
		return err
	}
	if stored.IsOwner() && !m.IsOwner() && !r.db.hasOtherOwner(org, id) {
		return domain.ErrLastOwner
	}
	// fn cannot change the id, organization or user (Member has no setters
	// for them), so the index stays valid; the copy keeps it so regardless.
	set(r.db, r.db.members, id, domain.RehydrateMember(id, stored.OrganizationID(), stored.UserID(), m.Roles(), stored.CreatedAt()))
	return nil
}

// RemoveMember implements ports.OrganizationRepository.
func (r *OrganizationRepository) RemoveMember(ctx context.Context, org domain.OrganizationID, id domain.MemberID) (*domain.Member, error) {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.organizations[org]; !ok {
		return nil, domain.ErrOrganizationNotFound
	}
	m, err := r.db.member(org, id)
	if err != nil {
		return nil, err
	}
	if m.IsOwner() && !r.db.hasOtherOwner(org, id) {
		return nil, domain.ErrLastOwner
	}
	r.db.deleteMember(m)
	return copyMember(m), nil
}

// CountMembers implements ports.OrganizationRepository.
func (r *OrganizationRepository) CountMembers(ctx context.Context, org domain.OrganizationID) (int, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	return len(r.db.membersByOrg[org]), nil
}

// CreateInvitation implements ports.OrganizationRepository. A missing
// inviter is a missing user, as the SQL foreign key reports it.
func (r *OrganizationRepository) CreateInvitation(ctx context.Context, inv *domain.Invitation) error {
	defer r.db.unlock(r.db.lock(ctx))
	if _, ok := r.db.organizations[inv.OrganizationID()]; !ok {
		return domain.ErrOrganizationNotFound
	}
	if _, ok := r.db.invitations[inv.ID()]; ok {
		return domain.ErrInvitationExists
	}
	if inv.InviterID() != "" && !r.db.hasUser(inv.InviterID()) {
		return domain.ErrUserNotFound
	}
	set(r.db, r.db.invitations, inv.ID(), copyInvitation(inv))
	return nil
}

// GetInvitation implements ports.OrganizationRepository.
func (r *OrganizationRepository) GetInvitation(ctx context.Context, id domain.InvitationID) (*domain.Invitation, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	inv, ok := r.db.invitations[id]
	if !ok {
		return nil, domain.ErrInvitationNotFound
	}
	return copyInvitation(inv), nil
}

// UpdateInvitation implements ports.OrganizationRepository.
func (r *OrganizationRepository) UpdateInvitation(ctx context.Context, id domain.InvitationID, fn func(inv *domain.Invitation) error) error {
	defer r.db.unlock(r.db.lock(ctx))
	stored, ok := r.db.invitations[id]
	if !ok {
		return domain.ErrInvitationNotFound
	}
	inv := copyInvitation(stored)
	if err := fn(inv); err != nil {
		return err
	}
	set(r.db, r.db.invitations, id, copyInvitation(inv))
	return nil
}

// AcceptInvitation implements ports.OrganizationRepository. The member is
// checked before the invitation is saved, so a failure changes nothing.
func (r *OrganizationRepository) AcceptInvitation(ctx context.Context, id domain.InvitationID, fn func(inv *domain.Invitation) error, m *domain.Member) error {
	defer r.db.unlock(r.db.lock(ctx))
	stored, ok := r.db.invitations[id]
	if !ok {
		return domain.ErrInvitationNotFound
	}
	if m.OrganizationID() != stored.OrganizationID() {
		return domain.Internal("memory: invitations.accept", errMemberOfAnotherOrg)
	}
	inv := copyInvitation(stored)
	if err := fn(inv); err != nil {
		return err
	}
	if err := r.db.insertMember(m); err != nil {
		return err
	}
	set(r.db, r.db.invitations, id, copyInvitation(inv))
	return nil
}

// ListInvitations implements ports.OrganizationRepository.
func (r *OrganizationRepository) ListInvitations(ctx context.Context, org domain.OrganizationID) ([]*domain.Invitation, error) {
	return r.listInvitations(ctx, func(inv *domain.Invitation) bool { return inv.OrganizationID() == org }), nil
}

// ListPendingInvitationsByEmail implements ports.OrganizationRepository.
func (r *OrganizationRepository) ListPendingInvitationsByEmail(ctx context.Context, email domain.Email, now time.Time) ([]*domain.Invitation, error) {
	return r.listInvitations(ctx, func(inv *domain.Invitation) bool { return inv.Email() == email && inv.IsOpen(now) }), nil
}

// FindPendingInvitation implements ports.OrganizationRepository.
func (r *OrganizationRepository) FindPendingInvitation(ctx context.Context, org domain.OrganizationID, email domain.Email, now time.Time) (*domain.Invitation, error) {
	list := r.listInvitations(ctx, func(inv *domain.Invitation) bool {
		return inv.OrganizationID() == org && inv.Email() == email && inv.IsOpen(now)
	})
	if len(list) == 0 {
		return nil, domain.ErrInvitationNotFound
	}
	return list[0], nil
}

// CountPendingInvitations implements ports.OrganizationRepository.
func (r *OrganizationRepository) CountPendingInvitations(ctx context.Context, org domain.OrganizationID, now time.Time) (int, error) {
	return len(r.listInvitations(ctx, func(inv *domain.Invitation) bool { return inv.OrganizationID() == org && inv.IsOpen(now) })), nil
}

// listInvitations returns copies of the invitations that match, newest first.
func (r *OrganizationRepository) listInvitations(ctx context.Context, match func(*domain.Invitation) bool) []*domain.Invitation {
	defer r.db.runlock(r.db.rlock(ctx))
	out := []*domain.Invitation{}
	for _, inv := range r.db.invitations {
		if match(inv) {
			out = append(out, copyInvitation(inv))
		}
	}
	slices.SortFunc(out, compareInvitationsNewestFirst)
	return out
}
