package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// RunOrganizationRepository runs the OrganizationRepository contract.
// newStores must return empty repositories sharing one fresh database each
// time it is called; the suite uses Users and Sessions besides Organizations.
func RunOrganizationRepository(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s Stores)
	}{
		// Organizations.
		{"create_then_get_round_trips", testOrgRoundTrip},
		{"create_with_a_taken_slug_is_conflict_and_stores_nothing", testOrgCreateTakenSlug},
		{"create_with_a_taken_id_is_conflict", testOrgCreateTakenID},
		{"create_for_a_missing_user_is_not_found_and_stores_nothing", testOrgCreateMissingUser},
		{"missing_organization_is_not_found", testOrgNotFound},
		{"slug_taken_reports_stored_slugs", testOrgSlugTaken},
		{"update_applies_fn", testOrgUpdate},
		{"update_to_a_taken_slug_is_conflict", testOrgUpdateTakenSlug},
		{"update_rolls_back_when_fn_fails", testOrgUpdateRollback},
		{"concurrent_updates_lose_no_write", testOrgUpdateParallel},
		{"delete_removes_members_and_invitations", testOrgDeleteCascades},
		{"delete_clears_the_active_organization_of_sessions", testOrgDeleteClearsSessions},
		{"list_by_user_is_oldest_membership_first", testOrgListByUser},
		// Members.
		{"add_member_then_get", testMemberAdd},
		{"add_member_twice_is_conflict", testMemberAddTwice},
		{"add_member_to_a_missing_organization_or_user_is_not_found", testMemberAddMissing},
		{"concurrent_adds_of_one_user_have_one_winner", testMemberAddRace},
		{"get_member_is_scoped_to_its_organization", testMemberScoped},
		{"get_member_by_user", testMemberByUser},
		{"list_members_pages_in_order", testMemberListPages},
		{"list_members_joins_the_current_users", testMemberListJoinsUsers},
		{"list_members_of_an_empty_or_missing_organization", testMemberListEmpty},
		{"list_members_refuses_a_bad_page", testMemberListBadPage},
		{"list_members_pages_by_cursor_in_either_order", testMemberListCursor},
		{"list_members_cursor_of_a_removed_member_still_places_the_page", testMemberListCursorRemoved},
		{"list_members_next_cursor_of_an_offset_page", testMemberListOffsetNext},
		{"count_members", testMemberCount},
		{"member_count_is_exact_through_every_change", testMemberCountExact},
		{"member_count_is_exact_under_concurrent_adds_and_removals", testMemberCountParallel},
		{"update_member_applies_fn", testMemberUpdate},
		{"update_member_rolls_back_when_fn_fails", testMemberUpdateRollback},
		{"update_member_of_a_missing_member_is_not_found", testMemberUpdateMissing},
		{"demoting_the_last_owner_is_refused", testMemberDemoteLastOwner},
		{"demoting_an_owner_when_another_remains", testMemberDemoteOwner},
		{"remove_member_returns_it", testMemberRemove},
		{"removing_the_last_owner_is_refused", testMemberRemoveLastOwner},
		{"removing_an_owner_when_another_remains", testMemberRemoveOwner},
		{"remove_member_of_another_organization_is_not_found", testMemberRemoveScoped},
		{"concurrent_removal_of_both_owners_keeps_one", testMemberRemoveOwnersParallel},
		{"concurrent_demotion_of_both_owners_keeps_one", testMemberDemoteOwnersParallel},
		{"deleting_the_user_deletes_their_memberships", testMemberUserCascade},
		// Invitations.
		{"create_invitation_then_get", testInvitationRoundTrip},
		{"create_invitation_needs_the_organization_and_inviter", testInvitationCreateMissing},
		{"duplicate_invitation_id_is_conflict", testInvitationDuplicate},
		{"update_invitation_applies_fn", testInvitationUpdate},
		{"update_invitation_rolls_back_when_fn_fails", testInvitationUpdateRollback},
		{"accept_invitation_answers_and_adds_the_member_together", testInvitationAccept},
		{"accept_invitation_saves_nothing_when_fn_fails", testInvitationAcceptFnFails},
		{"accept_invitation_of_a_member_is_conflict_and_changes_nothing", testInvitationAcceptMember},
		{"accept_invitation_of_a_missing_user_changes_nothing", testInvitationAcceptMissingUser},
		{"accept_missing_invitation_is_not_found", testInvitationAcceptMissing},
		{"list_invitations_is_newest_first", testInvitationList},
		{"list_pending_invitations_by_email", testInvitationListPending},
		{"find_pending_invitation_returns_the_newest", testInvitationFindPending},
		{"count_pending_invitations", testInvitationCountPending},
		{"returned_values_are_copies", testOrgCopies},
	}
	tests = append(tests, organizationListingTests...)
	for _, tt := range tests {
		t.Run("contract=OrganizationRepository/"+tt.name, func(t *testing.T) {
			tt.fn(t, newStores(t))
		})
	}
}

var (
	rolesOwner   = []domain.OrgRole{domain.OrgRoleOwner}
	rolesAdmin   = []domain.OrgRole{domain.OrgRoleAdmin}
	rolesMember  = []domain.OrgRole{domain.OrgRoleMember}
	inviteeEmail = domain.Email("invitee@example.com")
	inviteTTL    = 48 * time.Hour
	errOrgFn     = errors.New("fn failed")
)

// The codes of the port's errors, which every store must return.
var (
	codeOrgExists          = domain.ErrOrganizationExists.Code
	codeSlugTaken          = domain.ErrSlugTaken.Code
	codeAlreadyMember      = domain.ErrAlreadyMember.Code
	codeMemberNotFound     = domain.ErrMemberNotFound.Code
	codeInvitationNotFound = domain.ErrInvitationNotFound.Code
)

func mustOrg(t *testing.T, id, slug string, now time.Time) *domain.Organization {
	t.Helper()
	o, err := domain.NewOrganization(domain.OrganizationID(id), "Org "+id, slug, "", "", now)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func mustMember(t *testing.T, id string, org domain.OrganizationID, userID domain.UserID, roles []domain.OrgRole, now time.Time) *domain.Member {
	t.Helper()
	m, err := domain.NewMember(domain.MemberID(id), org, userID, roles, now)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// mustCreateOrg creates organization id with slug id, owned by user ownerID
// (created here) through member "<id>-<ownerID>", all at baseTime.
func mustCreateOrg(t *testing.T, s Stores, id string, ownerID domain.UserID) (*domain.Organization, *domain.Member) {
	t.Helper()
	mustCreateUsers(t, s, ownerID)
	o := mustOrg(t, id, id, baseTime)
	m := mustMember(t, id+"-"+string(ownerID), o.ID(), ownerID, rolesOwner, baseTime)
	if err := s.Organizations.Create(context.Background(), o, m); err != nil {
		t.Fatalf("Create organization %s: %v", id, err)
	}
	return o, m
}

// mustAddMember makes user userID, created here unless they exist, a member
// of org through member "<org>-<userID>".
func mustAddMember(t *testing.T, s Stores, org domain.OrganizationID, userID domain.UserID, roles []domain.OrgRole, at time.Time) *domain.Member {
	t.Helper()
	if _, err := s.Users.Get(context.Background(), userID); errors.Is(err, domain.ErrNotFound) {
		mustCreateUsers(t, s, userID)
	}
	m := mustMember(t, string(org)+"-"+string(userID), org, userID, roles, at)
	if err := s.Organizations.AddMember(context.Background(), m); err != nil {
		t.Fatalf("AddMember %s: %v", m.ID(), err)
	}
	return m
}

func mustInvitation(t *testing.T, id string, org domain.OrganizationID, email domain.Email, inviter domain.UserID, ttl time.Duration, now time.Time) *domain.Invitation {
	t.Helper()
	inv, err := domain.NewInvitation(domain.InvitationID(id), org, email, []domain.OrgRole{domain.OrgRoleMember, domain.OrgRoleAdmin}, inviter, ttl, now)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func mustCreateInvitation(t *testing.T, s Stores, inv *domain.Invitation) {
	t.Helper()
	if err := s.Organizations.CreateInvitation(context.Background(), inv); err != nil {
		t.Fatalf("CreateInvitation %s: %v", inv.ID(), err)
	}
}

// mustBeCode fails unless err has sentinel's kind and the code.
func mustBeCode(t *testing.T, err error, sentinel *domain.Error, code string) {
	t.Helper()
	var de *domain.Error
	if !errors.Is(err, sentinel) || !errors.As(err, &de) || de.Code != code {
		t.Fatalf("error = %v, want kind %v with code %s", err, sentinel.Kind, code)
	}
}

func mustBeLastOwner(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, domain.ErrLastOwner) {
		t.Fatalf("error = %v, want ErrLastOwner", err)
	}
}

func mustGetOrg(t *testing.T, s Stores, id domain.OrganizationID) *domain.Organization {
	t.Helper()
	o, err := s.Organizations.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("Get organization %s: %v", id, err)
	}
	return o
}

func mustGetMember(t *testing.T, s Stores, org domain.OrganizationID, id domain.MemberID) *domain.Member {
	t.Helper()
	m, err := s.Organizations.GetMember(context.Background(), org, id)
	if err != nil {
		t.Fatalf("GetMember %s/%s: %v", org, id, err)
	}
	return m
}

func mustGetInvitation(t *testing.T, s Stores, id domain.InvitationID) *domain.Invitation {
	t.Helper()
	inv, err := s.Organizations.GetInvitation(context.Background(), id)
	if err != nil {
		t.Fatalf("GetInvitation %s: %v", id, err)
	}
	return inv
}

func mustCountMembers(t *testing.T, s Stores, org domain.OrganizationID) int {
	t.Helper()
	n, err := s.Organizations.CountMembers(context.Background(), org)
	if err != nil {
		t.Fatalf("CountMembers %s: %v", org, err)
	}
	return n
}

func assertSameOrg(t *testing.T, got, want *domain.Organization) {
	t.Helper()
	if got.ID() != want.ID() || got.Name() != want.Name() || got.Slug() != want.Slug() ||
		got.Logo() != want.Logo() || got.Metadata() != want.Metadata() || got.RequiresTwoFactor() != want.RequiresTwoFactor() {
		t.Fatalf("organization mismatch:\n got  %s\n want %s", describeOrg(got), describeOrg(want))
	}
	assertTime(t, "CreatedAt", got.CreatedAt(), want.CreatedAt())
	assertTime(t, "UpdatedAt", got.UpdatedAt(), want.UpdatedAt())
}

func describeOrg(o *domain.Organization) string {
	return fmt.Sprintf("{id=%s name=%q slug=%s logo=%q metadata=%q requireTwoFactor=%v created=%s updated=%s}", o.ID(), o.Name(), o.Slug(),
		o.Logo(), o.Metadata(), o.RequiresTwoFactor(), o.CreatedAt().Format(time.RFC3339Nano), o.UpdatedAt().Format(time.RFC3339Nano))
}

func assertSameMember(t *testing.T, got, want *domain.Member) {
	t.Helper()
	if got.ID() != want.ID() || got.OrganizationID() != want.OrganizationID() || got.UserID() != want.UserID() ||
		!slices.Equal(got.Roles(), want.Roles()) {
		t.Fatalf("member mismatch:\n got  %s\n want %s", describeMember(got), describeMember(want))
	}
	assertTime(t, "CreatedAt", got.CreatedAt(), want.CreatedAt())
}

func describeMember(m *domain.Member) string {
	return fmt.Sprintf("{id=%s org=%s user=%s roles=%v created=%s}", m.ID(), m.OrganizationID(), m.UserID(), m.Roles(),
		m.CreatedAt().Format(time.RFC3339Nano))
}

func assertSameInvitation(t *testing.T, got, want *domain.Invitation) {
	t.Helper()
	if got.ID() != want.ID() || got.OrganizationID() != want.OrganizationID() || got.Email() != want.Email() ||
		!slices.Equal(got.Roles(), want.Roles()) || got.Status() != want.Status() || got.InviterID() != want.InviterID() {
		t.Fatalf("invitation mismatch:\n got  %s\n want %s", describeInvitation(got), describeInvitation(want))
	}
	assertTime(t, "ExpiresAt", got.ExpiresAt(), want.ExpiresAt())
	assertTime(t, "CreatedAt", got.CreatedAt(), want.CreatedAt())
	assertTime(t, "UpdatedAt", got.UpdatedAt(), want.UpdatedAt())
}

func describeInvitation(inv *domain.Invitation) string {
	return fmt.Sprintf("{id=%s org=%s email=%s roles=%v status=%s inviter=%q expires=%s created=%s updated=%s}",
		inv.ID(), inv.OrganizationID(), inv.Email(), inv.Roles(), inv.Status(), inv.InviterID(),
		inv.ExpiresAt().Format(time.RFC3339Nano), inv.CreatedAt().Format(time.RFC3339Nano), inv.UpdatedAt().Format(time.RFC3339Nano))
}

func orgIDs(list []*domain.Organization) []domain.OrganizationID {
	out := make([]domain.OrganizationID, 0, len(list))
	for _, o := range list {
		out = append(out, o.ID())
	}
	return out
}

func invitationIDs(list []*domain.Invitation) []domain.InvitationID {
	out := make([]domain.InvitationID, 0, len(list))
	for _, inv := range list {
		out = append(out, inv.ID())
	}
	return out
}

func mustListByUser(t *testing.T, s Stores, userID domain.UserID) []domain.OrganizationID {
	t.Helper()
	list, err := s.Organizations.ListByUser(context.Background(), userID)
	if err != nil {
		t.Fatalf("ListByUser %s: %v", userID, err)
	}
	return orgIDs(list)
}

// mustListMembers returns the member ids of one page and the total.
func mustListMembers(t *testing.T, s Stores, org domain.OrganizationID, q ports.MemberQuery) ([]domain.MemberID, int) {
	t.Helper()
	ids, total, _ := mustListMembersPage(t, s, org, q)
	return ids, total
}

// mustListMembersPage returns the ids on one page, the total and the next
// cursor, checking that every member comes with its user and that the
// cursor is the last member's position exactly when it is not nil.
func mustListMembersPage(t *testing.T, s Stores, org domain.OrganizationID, q ports.MemberQuery) ([]domain.MemberID, int, *ports.MemberCursor) {
	t.Helper()
	page, err := s.Organizations.ListMembers(context.Background(), org, q)
	if err != nil {
		t.Fatalf("ListMembers %s %+v: %v", org, q, err)
	}
	ids := make([]domain.MemberID, 0, len(page.Members))
	for _, mu := range page.Members {
		if mu.User == nil || mu.User.ID() != mu.Member.UserID() {
			t.Fatalf("member %s comes with user %v, want %s", mu.Member.ID(), mu.User, mu.Member.UserID())
		}
		ids = append(ids, mu.Member.ID())
	}
	if next := page.Next; next != nil {
		if len(page.Members) == 0 {
			t.Fatalf("ListMembers %s %+v: an empty page with a next cursor %+v", org, q, *next)
		}
		last := page.Members[len(page.Members)-1].Member
		if next.ID != last.ID() || !next.CreatedAt.Equal(last.CreatedAt()) {
			t.Fatalf("ListMembers %s %+v: next cursor %+v, want the last member's position (%s, %s)", org, q, *next, last.CreatedAt(), last.ID())
		}
	}
	return ids, page.Total, page.Next
}

// --- Organizations ---

func testOrgRoundTrip(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	// A non-UTC instant with nanoseconds comes back as the same instant at
	// microsecond precision, in UTC.
	local := time.Date(2026, 7, 8, 9, 10, 11, 654321987, time.FixedZone("UTC+5:30", 5*60*60+30*60))
	o, err := domain.NewOrganization("o1", "Acme Corporation", "acme", "https://example.com/acme.png", `{"plan":"pro","seats":5}`, local)
	if err != nil {
		t.Fatal(err)
	}
	m := mustMember(t, "m1", "o1", "u1", rolesOwner, local.Add(time.Second))
	if err := s.Organizations.Create(ctx, o, m); err != nil {
		t.Fatal(err)
	}

	got := mustGetOrg(t, s, "o1")
	assertSameOrg(t, got, o)
	assertTime(t, "CreatedAt", got.CreatedAt(), local.Truncate(time.Microsecond))
	bySlug, err := s.Organizations.GetBySlug(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	assertSameOrg(t, bySlug, o)

	assertSameMember(t, mustGetMember(t, s, "o1", "m1"), m)
	byUser, err := s.Organizations.GetMemberByUser(ctx, "o1", "u1")
	if err != nil {
		t.Fatal(err)
	}
	assertSameMember(t, byUser, m)
	if !byUser.IsOwner() {
		t.Fatal("the creator is not an owner")
	}
	if n := mustCountMembers(t, s, "o1"); n != 1 {
		t.Fatalf("CountMembers = %d, want 1", n)
	}
	if got := mustListByUser(t, s, "u1"); !slices.Equal(got, []domain.OrganizationID{"o1"}) {
		t.Fatalf("ListByUser(u1) = %v, want [o1]", got)
	}
}

func testOrgCreateTakenSlug(t *testing.T, s Stores) {
	ctx := context.Background()
	first, _ := mustCreateOrg(t, s, "o1", "u1")
	mustCreateUsers(t, s, "u2")
	dup := mustOrg(t, "o2", "o1", baseTime.Add(time.Minute))
	err := s.Organizations.Create(ctx, dup, mustMember(t, "m2", "o2", "u2", rolesOwner, baseTime))
	mustBeCode(t, err, domain.ErrConflict, codeOrgExists)

	_, err = s.Organizations.Get(ctx, "o2")
	mustBeKind(t, err, domain.ErrNotFound)
	_, err = s.Organizations.GetMember(ctx, "o2", "m2")
	mustBeKind(t, err, domain.ErrNotFound)
	if got := mustListByUser(t, s, "u2"); len(got) != 0 {
		t.Fatalf("ListByUser(u2) = %v after a failed create, want none", got)
	}
	bySlug, err := s.Organizations.GetBySlug(ctx, "o1")
	if err != nil {
		t.Fatal(err)
	}
	assertSameOrg(t, bySlug, first)
	// The member id was not taken either.
	o3 := mustOrg(t, "o3", "o3", baseTime)
	if err := s.Organizations.Create(ctx, o3, mustMember(t, "m2", "o3", "u2", rolesOwner, baseTime)); err != nil {
		t.Fatalf("Create with the failed create's member id: %v", err)
	}
}

func testOrgCreateTakenID(t *testing.T, s Stores) {
	ctx := context.Background()
	first, _ := mustCreateOrg(t, s, "o1", "u1")
	mustCreateUsers(t, s, "u2")
	dup := mustOrg(t, "o1", "other-slug", baseTime)
	err := s.Organizations.Create(ctx, dup, mustMember(t, "m2", "o1", "u2", rolesOwner, baseTime))
	mustBeCode(t, err, domain.ErrConflict, codeOrgExists)
	assertSameOrg(t, mustGetOrg(t, s, "o1"), first)
	if taken, err := s.Organizations.SlugTaken(ctx, "other-slug"); err != nil || taken {
		t.Fatalf("SlugTaken(other-slug) = %v, %v after a failed create; want false", taken, err)
	}
	if _, err := s.Organizations.GetMemberByUser(ctx, "o1", "u2"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("u2 became a member through a failed create: %v", err)
	}
}

func testOrgCreateMissingUser(t *testing.T, s Stores) {
	ctx := context.Background()
	o := mustOrg(t, "o1", "acme", baseTime)
	err := s.Organizations.Create(ctx, o, mustMember(t, "m1", "o1", "ghost", rolesOwner, baseTime))
	mustBeKind(t, err, domain.ErrNotFound)
	_, err = s.Organizations.Get(ctx, "o1")
	mustBeKind(t, err, domain.ErrNotFound)
	if taken, err := s.Organizations.SlugTaken(ctx, "acme"); err != nil || taken {
		t.Fatalf("SlugTaken(acme) = %v, %v after a failed create; want false", taken, err)
	}
	// Nothing was left behind: the same organization can be created.
	mustCreateUsers(t, s, "u1")
	if err := s.Organizations.Create(ctx, o, mustMember(t, "m1", "o1", "u1", rolesOwner, baseTime)); err != nil {
		t.Fatalf("Create after a failed create: %v", err)
	}
}

func testOrgNotFound(t *testing.T, s Stores) {
	ctx := context.Background()
	_, err := s.Organizations.Get(ctx, "nothing")
	mustBeKind(t, err, domain.ErrNotFound)
	_, err = s.Organizations.GetBySlug(ctx, "nothing")
	mustBeKind(t, err, domain.ErrNotFound)
	called := false
	err = s.Organizations.Update(ctx, "nothing", func(*domain.Organization) error { called = true; return nil })
	mustBeKind(t, err, domain.ErrNotFound)
	if called {
		t.Fatal("fn was called for a missing organization")
	}
	mustBeKind(t, s.Organizations.Delete(ctx, "nothing"), domain.ErrNotFound)
	if got := mustListByUser(t, s, "nobody"); len(got) != 0 {
		t.Fatalf("ListByUser(nobody) = %v, want none", got)
	}
}

func testOrgSlugTaken(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "acme", "u1")
	for slug, want := range map[string]bool{"acme": true, "acme-2": false, "acm": false} {
		got, err := s.Organizations.SlugTaken(ctx, slug)
		if err != nil || got != want {
			t.Fatalf("SlugTaken(%s) = %v, %v; want %v", slug, got, err, want)
		}
	}
	if err := s.Organizations.Delete(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if taken, err := s.Organizations.SlugTaken(ctx, "acme"); err != nil || taken {
		t.Fatalf("SlugTaken(acme) = %v, %v after delete; want false", taken, err)
	}
}

func testOrgUpdate(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	later := baseTime.Add(time.Hour)
	err := s.Organizations.Update(ctx, "o1", func(o *domain.Organization) error {
		if err := o.Rename("Renamed", later); err != nil {
			return err
		}
		if err := o.SetSlug("renamed", later); err != nil {
			return err
		}
		if err := o.SetLogo("https://example.com/logo.svg", later); err != nil {
			return err
		}
		o.SetRequireTwoFactor(true, later)
		return o.SetMetadata(`{"tier":1}`, later)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := domain.RehydrateOrganization("o1", "Renamed", "renamed", "https://example.com/logo.svg", `{"tier":1}`, true, baseTime, later)
	assertSameOrg(t, mustGetOrg(t, s, "o1"), want)
	// And off again.
	if err := s.Organizations.Update(ctx, "o1", func(o *domain.Organization) error { o.SetRequireTwoFactor(false, later); return nil }); err != nil {
		t.Fatal(err)
	}
	if mustGetOrg(t, s, "o1").RequiresTwoFactor() {
		t.Fatal("the second-factor rule is still on after turning it off")
	}
	want = domain.RehydrateOrganization("o1", "Renamed", "renamed", "https://example.com/logo.svg", `{"tier":1}`, false, baseTime, later)
	got, err := s.Organizations.GetBySlug(ctx, "renamed")
	if err != nil {
		t.Fatal(err)
	}
	assertSameOrg(t, got, want)
	_, err = s.Organizations.GetBySlug(ctx, "o1")
	mustBeKind(t, err, domain.ErrNotFound)
	// The old slug is free again.
	mustCreateUsers(t, s, "u2")
	if err := s.Organizations.Create(ctx, mustOrg(t, "o2", "o1", baseTime), mustMember(t, "m2", "o2", "u2", rolesOwner, baseTime)); err != nil {
		t.Fatalf("Create with the freed slug: %v", err)
	}
}

func testOrgUpdateTakenSlug(t *testing.T, s Stores) {
	ctx := context.Background()
	o1, _ := mustCreateOrg(t, s, "o1", "u1")
	mustCreateOrg(t, s, "o2", "u2")
	err := s.Organizations.Update(ctx, "o1", func(o *domain.Organization) error {
		if err := o.Rename("Renamed", baseTime.Add(time.Hour)); err != nil {
			return err
		}
		return o.SetSlug("o2", baseTime.Add(time.Hour))
	})
	mustBeCode(t, err, domain.ErrConflict, codeSlugTaken)
	assertSameOrg(t, mustGetOrg(t, s, "o1"), o1)
	// Keeping its own slug is no conflict.
	if err := s.Organizations.Update(ctx, "o1", func(o *domain.Organization) error { return o.SetSlug("o1", baseTime) }); err != nil {
		t.Fatalf("Update keeping the slug: %v", err)
	}
}

func testOrgUpdateRollback(t *testing.T, s Stores) {
	o1, _ := mustCreateOrg(t, s, "o1", "u1")
	err := s.Organizations.Update(context.Background(), "o1", func(o *domain.Organization) error {
		_ = o.Rename("Renamed", baseTime.Add(time.Hour))
		_ = o.SetSlug("renamed", baseTime.Add(time.Hour))
		return errOrgFn
	})
	if !errors.Is(err, errOrgFn) {
		t.Fatalf("Update error = %v, want the fn's error", err)
	}
	assertSameOrg(t, mustGetOrg(t, s, "o1"), o1)
	if taken, _ := s.Organizations.SlugTaken(context.Background(), "renamed"); taken {
		t.Fatal("the rolled-back slug is taken")
	}
}

func testOrgUpdateParallel(t *testing.T, s Stores) {
	mustCreateOrg(t, s, "o1", "u1")
	const workers = 20
	// Each update moves updatedAt one second past what it read, so a lost
	// write leaves it short of workers seconds.
	errs := runParallel(workers, func(i int) error {
		return s.Organizations.Update(context.Background(), "o1", func(o *domain.Organization) error {
			return o.Rename(fmt.Sprintf("Name %d", i), o.UpdatedAt().Add(time.Second))
		})
	})
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Update: %v", err)
		}
	}
	if got, want := mustGetOrg(t, s, "o1").UpdatedAt(), baseTime.Add(workers*time.Second); !got.Equal(want) {
		t.Fatalf("UpdatedAt = %s after %d updates, want %s: writes were lost", got, workers, want)
	}
}

func testOrgDeleteCascades(t *testing.T, s Stores) {
	ctx := context.Background()
	o1, m1 := mustCreateOrg(t, s, "o1", "u1")
	m2 := mustAddMember(t, s, "o1", "u2", rolesMember, baseTime.Add(time.Minute))
	mustCreateInvitation(t, s, mustInvitation(t, "i1", "o1", inviteeEmail, "u1", inviteTTL, baseTime))
	// Another organization, which keeps everything.
	_, other := mustCreateOrg(t, s, "o2", "u3")
	mustAddMember(t, s, "o2", "u2", rolesMember, baseTime)
	mustCreateInvitation(t, s, mustInvitation(t, "i2", "o2", inviteeEmail, "u3", inviteTTL, baseTime))

	if err := s.Organizations.Delete(ctx, o1.ID()); err != nil {
		t.Fatal(err)
	}
	_, err := s.Organizations.Get(ctx, "o1")
	mustBeKind(t, err, domain.ErrNotFound)
	for _, m := range []*domain.Member{m1, m2} {
		_, err := s.Organizations.GetMember(ctx, "o1", m.ID())
		mustBeKind(t, err, domain.ErrNotFound)
		_, err = s.Organizations.GetMemberByUser(ctx, "o1", m.UserID())
		mustBeKind(t, err, domain.ErrNotFound)
	}
	_, err = s.Organizations.GetInvitation(ctx, "i1")
	mustBeKind(t, err, domain.ErrNotFound)
	if n := mustCountMembers(t, s, "o1"); n != 0 {
		t.Fatalf("CountMembers(o1) = %d after delete, want 0", n)
	}
	if list, err := s.Organizations.ListInvitations(ctx, "o1"); err != nil || len(list) != 0 {
		t.Fatalf("ListInvitations(o1) = %v, %v after delete; want none", invitationIDs(list), err)
	}
	if got := mustListByUser(t, s, "u2"); !slices.Equal(got, []domain.OrganizationID{"o2"}) {
		t.Fatalf("ListByUser(u2) = %v, want [o2]", got)
	}
	assertSameMember(t, mustGetMember(t, s, "o2", other.ID()), other)
	mustGetInvitation(t, s, "i2")
	if n := mustCountMembers(t, s, "o2"); n != 2 {
		t.Fatalf("CountMembers(o2) = %d, want 2", n)
	}
	mustBeKind(t, s.Organizations.Delete(ctx, "o1"), domain.ErrNotFound)
	// The users stay, and the freed slug and member ids may be used again.
	if _, err := s.Users.Get(ctx, "u1"); err != nil {
		t.Fatalf("deleting the organization deleted its owner: %v", err)
	}
	if err := s.Organizations.Create(ctx, mustOrg(t, "o1", "o1", baseTime), m1); err != nil {
		t.Fatalf("Create again after delete: %v", err)
	}
}

func testOrgDeleteClearsSessions(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	mustCreateOrg(t, s, "o2", "u2")
	working := func(id string, userID domain.UserID, org domain.OrganizationID) {
		sess := domain.NewSession(domain.SessionID(id), userID, domain.HashToken("token-"+id), true, "", "", sessionPolicy, baseTime)
		sess.SetActiveOrganization(org, baseTime)
		mustCreateSession(t, s.Sessions, sess)
	}
	working("s1", "u1", "o1")
	working("s2", "u2", "o1")
	working("s3", "u2", "o2")

	if err := s.Organizations.Delete(ctx, "o1"); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[domain.SessionID]domain.OrganizationID{"s1": "", "s2": "", "s3": "o2"} {
		sess, err := s.Sessions.Get(ctx, id)
		if err != nil {
			t.Fatalf("session %s: %v (deleting an organization must not delete sessions)", id, err)
		}
		if got := sess.ActiveOrganizationID(); got != want {
			t.Fatalf("session %s active organization = %q, want %q", id, got, want)
		}
	}
}

func testOrgListByUser(t *testing.T, s Stores) {
	ctx := context.Background()
	// u9 joins c first, then a and b at the same instant (ties broken by
	// member id: "a-u9" < "b-u9"), then d; e is someone else's.
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		mustCreateOrg(t, s, id, domain.UserID("owner-"+id))
	}
	mustCreateUsers(t, s, "u9")
	for id, at := range map[string]time.Time{"c": baseTime, "a": baseTime.Add(time.Minute), "b": baseTime.Add(time.Minute), "d": baseTime.Add(time.Hour)} {
		if err := s.Organizations.AddMember(ctx, mustMember(t, id+"-u9", domain.OrganizationID(id), "u9", rolesMember, at)); err != nil {
			t.Fatal(err)
		}
	}
	want := []domain.OrganizationID{"c", "a", "b", "d"}
	list, err := s.Organizations.ListByUser(ctx, "u9")
	if err != nil {
		t.Fatal(err)
	}
	if got := orgIDs(list); !slices.Equal(got, want) {
		t.Fatalf("ListByUser(u9) = %v, want %v (oldest membership first)", got, want)
	}
	assertSameOrg(t, list[0], mustGetOrg(t, s, "c"))
}

// --- Members ---

func testMemberAdd(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	mustCreateUsers(t, s, "u2")
	at := time.Date(2026, 5, 6, 7, 8, 9, 987654321, time.FixedZone("UTC-3", -3*60*60))
	m := mustMember(t, "m2", "o1", "u2", []domain.OrgRole{domain.OrgRoleAdmin, domain.OrgRoleMember}, at)
	if err := s.Organizations.AddMember(ctx, m); err != nil {
		t.Fatal(err)
	}
	got := mustGetMember(t, s, "o1", "m2")
	assertSameMember(t, got, m)
	assertTime(t, "CreatedAt", got.CreatedAt(), at.Truncate(time.Microsecond))
	if !slices.Equal(got.Roles(), []domain.OrgRole{domain.OrgRoleAdmin, domain.OrgRoleMember}) {
		t.Fatalf("roles = %v, want [admin member] in order", got.Roles())
	}
	byUser, err := s.Organizations.GetMemberByUser(ctx, "o1", "u2")
	if err != nil {
		t.Fatal(err)
	}
	assertSameMember(t, byUser, m)
	if n := mustCountMembers(t, s, "o1"); n != 2 {
		t.Fatalf("CountMembers = %d, want 2", n)
	}
}

func testMemberAddTwice(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	first := mustAddMember(t, s, "o1", "u2", rolesMember, baseTime)
	again := mustMember(t, "another-id", "o1", "u2", rolesAdmin, baseTime.Add(time.Minute))
	mustBeCode(t, s.Organizations.AddMember(ctx, again), domain.ErrConflict, codeAlreadyMember)
	// The creator too is already a member.
	mustBeCode(t, s.Organizations.AddMember(ctx, mustMember(t, "m9", "o1", "u1", rolesMember, baseTime)), domain.ErrConflict, codeAlreadyMember)
	_, err := s.Organizations.GetMember(ctx, "o1", "another-id")
	mustBeKind(t, err, domain.ErrNotFound)
	assertSameMember(t, mustGetMember(t, s, "o1", first.ID()), first)
	if n := mustCountMembers(t, s, "o1"); n != 2 {
		t.Fatalf("CountMembers = %d, want 2", n)
	}
}

func testMemberAddMissing(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	mustCreateUsers(t, s, "u2")
	mustBeKind(t, s.Organizations.AddMember(ctx, mustMember(t, "m2", "ghost-org", "u2", rolesMember, baseTime)), domain.ErrNotFound)
	mustBeKind(t, s.Organizations.AddMember(ctx, mustMember(t, "m3", "o1", "ghost", rolesMember, baseTime)), domain.ErrNotFound)
	if n := mustCountMembers(t, s, "o1"); n != 1 {
		t.Fatalf("CountMembers = %d, want 1", n)
	}
	if got := mustListByUser(t, s, "u2"); len(got) != 0 {
		t.Fatalf("ListByUser(u2) = %v, want none", got)
	}
}

func testMemberAddRace(t *testing.T, s Stores) {
	mustCreateOrg(t, s, "o1", "u1")
	mustCreateUsers(t, s, "u2")
	const workers = 8
	members := make([]*domain.Member, workers)
	for i := range members {
		members[i] = mustMember(t, fmt.Sprintf("m%d", i), "o1", "u2", rolesMember, baseTime)
	}
	errs := runParallel(workers, func(i int) error {
		return s.Organizations.AddMember(context.Background(), members[i])
	})
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case errors.Is(err, domain.ErrConflict):
		default:
			t.Fatalf("concurrent AddMember: %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d concurrent adds of one user succeeded, want exactly 1", wins)
	}
	if n := mustCountMembers(t, s, "o1"); n != 2 {
		t.Fatalf("CountMembers = %d, want 2", n)
	}
}

func testMemberScoped(t *testing.T, s Stores) {
	ctx := context.Background()
	_, m1 := mustCreateOrg(t, s, "o1", "u1")
	_, m2 := mustCreateOrg(t, s, "o2", "u2")
	assertSameMember(t, mustGetMember(t, s, "o1", m1.ID()), m1)
	_, err := s.Organizations.GetMember(ctx, "o1", m2.ID())
	mustBeKind(t, err, domain.ErrNotFound)
	_, err = s.Organizations.GetMember(ctx, "o2", m1.ID())
	mustBeKind(t, err, domain.ErrNotFound)
	_, err = s.Organizations.GetMember(ctx, "o1", "nothing")
	mustBeKind(t, err, domain.ErrNotFound)
	_, err = s.Organizations.GetMember(ctx, "ghost", m1.ID())
	mustBeKind(t, err, domain.ErrNotFound)
}

func testMemberByUser(t *testing.T, s Stores) {
	ctx := context.Background()
	_, m1 := mustCreateOrg(t, s, "o1", "u1")
	mustCreateOrg(t, s, "o2", "u2")
	m3 := mustAddMember(t, s, "o2", "u3", rolesAdmin, baseTime)
	got, err := s.Organizations.GetMemberByUser(ctx, "o1", "u1")
	if err != nil {
		t.Fatal(err)
	}
	assertSameMember(t, got, m1)
	got, err = s.Organizations.GetMemberByUser(ctx, "o2", "u3")
	if err != nil {
		t.Fatal(err)
	}
	assertSameMember(t, got, m3)
	for _, c := range []struct {
		org  domain.OrganizationID
		user domain.UserID
	}{{"o1", "u2"}, {"o1", "u3"}, {"o2", "u1"}, {"ghost", "u1"}, {"o1", "ghost"}} {
		_, err := s.Organizations.GetMemberByUser(ctx, c.org, c.user)
		mustBeKind(t, err, domain.ErrNotFound)
	}
}

// seedMemberPage gives organization o1 seven members: the owner m-u1 at
// baseTime, then a, b and c at one instant (ties broken by id), then d, e
// and f a minute apart. Organization o2 has members too, which never show.
func seedMemberPage(t *testing.T, s Stores) {
	t.Helper()
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	mustCreateOrg(t, s, "o2", "u9")
	tie := baseTime.Add(time.Second)
	// Added out of order, so that insertion order cannot pass for sorting.
	adds := []struct {
		id string
		at time.Time
	}{
		{"f", baseTime.Add(4 * time.Minute)}, {"c", tie}, {"d", baseTime.Add(2 * time.Minute)},
		{"a", tie}, {"e", baseTime.Add(3 * time.Minute)}, {"b", tie},
	}
	for _, a := range adds {
		userID := domain.UserID("user-" + a.id)
		mustCreateUsers(t, s, userID)
		if err := s.Organizations.AddMember(ctx, mustMember(t, a.id, "o1", userID, rolesMember, a.at)); err != nil {
			t.Fatal(err)
		}
		if err := s.Organizations.AddMember(ctx, mustMember(t, "o2-"+a.id, "o2", userID, rolesMember, a.at)); err != nil {
			t.Fatal(err)
		}
	}
}

func testMemberListPages(t *testing.T, s Stores) {
	seedMemberPage(t, s)
	all := []domain.MemberID{"o1-u1", "a", "b", "c", "d", "e", "f"}
	desc := slices.Clone(all)
	slices.Reverse(desc)
	tests := []struct {
		q    ports.MemberQuery
		want []domain.MemberID
	}{
		{ports.MemberQuery{Limit: 100}, all},
		{ports.MemberQuery{Limit: 100, SortDesc: true}, desc},
		{ports.MemberQuery{Limit: 3}, all[:3]},
		{ports.MemberQuery{Limit: 3, Offset: 3}, all[3:6]},
		{ports.MemberQuery{Limit: 3, Offset: 6}, all[6:]},
		{ports.MemberQuery{Limit: 2, Offset: 1, SortDesc: true}, desc[1:3]},
		{ports.MemberQuery{Limit: 3, Offset: 4, SortDesc: true}, desc[4:]},
		{ports.MemberQuery{Limit: 1000, Offset: 7}, nil},
		{ports.MemberQuery{Limit: 1, Offset: 100}, nil},
	}
	for _, tt := range tests {
		got, total := mustListMembers(t, s, "o1", tt.q)
		if !slices.Equal(got, tt.want) && (len(got) != 0 || len(tt.want) != 0) {
			t.Fatalf("ListMembers(%+v) = %v, want %v", tt.q, got, tt.want)
		}
		if total != len(all) {
			t.Fatalf("ListMembers(%+v) total = %d, want %d", tt.q, total, len(all))
		}
	}
}

func testMemberListJoinsUsers(t *testing.T, s Stores) {
	ctx := context.Background()
	_, m1 := mustCreateOrg(t, s, "o1", "u1")
	m2 := mustAddMember(t, s, "o1", "u2", rolesAdmin, baseTime.Add(time.Minute))
	later := baseTime.Add(time.Hour)
	if err := s.Users.Update(ctx, "u2", func(u *domain.User) error {
		u.MarkEmailVerified(later)
		if err := u.SetImage("https://example.com/u2.png", later); err != nil {
			return err
		}
		return u.Rename("Renamed", later)
	}); err != nil {
		t.Fatal(err)
	}
	list, err := s.Organizations.ListMembers(ctx, "o1", ports.MemberQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	page, total := list.Members, list.Total
	if total != 2 || len(page) != 2 || list.Next != nil {
		t.Fatalf("ListMembers = %d members of %d, next %v; want 2 of 2, no next", len(page), total, list.Next)
	}
	for i, want := range []*domain.Member{m1, m2} {
		assertSameMember(t, page[i].Member, want)
		u, err := s.Users.Get(ctx, want.UserID())
		if err != nil {
			t.Fatal(err)
		}
		assertSameUser(t, page[i].User, u)
	}
}

func testMemberListEmpty(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	page, err := s.Organizations.ListMembers(ctx, "ghost", ports.MemberQuery{Limit: 10})
	if err != nil || page.Total != 0 || len(page.Members) != 0 || page.Next != nil {
		t.Fatalf("ListMembers(ghost) = %d members of %d, next %v, %v; want none", len(page.Members), page.Total, page.Next, err)
	}
	after := &ports.MemberCursor{CreatedAt: baseTime, ID: "x"}
	page, err = s.Organizations.ListMembers(ctx, "ghost", ports.MemberQuery{Limit: 10, After: after})
	if err != nil || page.Total != 0 || len(page.Members) != 0 || page.Next != nil {
		t.Fatalf("ListMembers(ghost, after) = %d members of %d, next %v, %v; want none", len(page.Members), page.Total, page.Next, err)
	}
	if n := mustCountMembers(t, s, "ghost"); n != 0 {
		t.Fatalf("CountMembers(ghost) = %d, want 0", n)
	}
}

func testMemberListBadPage(t *testing.T, s Stores) {
	mustCreateOrg(t, s, "o1", "u1")
	after := &ports.MemberCursor{CreatedAt: baseTime, ID: "o1-u1"}
	for _, q := range []ports.MemberQuery{
		{Limit: 0}, {Limit: -1}, {Limit: 1001}, {Limit: 10, Offset: -1},
		{Limit: 10, Offset: 1, After: after}, {Limit: 0, After: after},
	} {
		_, err := s.Organizations.ListMembers(context.Background(), "o1", q)
		mustBeKind(t, err, domain.ErrInvalid)
	}
}

// walkMembersByCursor reads o1's members page by page from the start,
// following each page's next cursor, and returns them in order. It fails
// unless every page but the last is full and has a next cursor, the last
// has none, and every page has the total.
func walkMembersByCursor(t *testing.T, s Stores, limit int, desc bool, total int) []domain.MemberID {
	t.Helper()
	var all []domain.MemberID
	q := ports.MemberQuery{Limit: limit, SortDesc: desc}
	for pages := 0; ; pages++ {
		if pages > total+1 {
			t.Fatalf("limit %d, desc %v: more pages than members, ids so far %v", limit, desc, all)
		}
		ids, gotTotal, next := mustListMembersPage(t, s, "o1", q)
		if gotTotal != total {
			t.Fatalf("limit %d, desc %v, page %d: total = %d, want %d", limit, desc, pages, gotTotal, total)
		}
		all = append(all, ids...)
		if next == nil {
			return all
		}
		if len(ids) != limit {
			t.Fatalf("limit %d, desc %v, page %d: %d members and a next cursor; only a full page has one", limit, desc, pages, len(ids))
		}
		q.After = next
	}
}

func testMemberListCursor(t *testing.T, s Stores) {
	seedMemberPage(t, s)
	all := []domain.MemberID{"o1-u1", "a", "b", "c", "d", "e", "f"}
	desc := slices.Clone(all)
	slices.Reverse(desc)
	// Every page size, so that pages end inside the tie of a, b and c, on
	// its edges and on the very last member (7 = 7 × 1: the last page is
	// full and still has no next cursor).
	for limit := 1; limit <= len(all)+1; limit++ {
		if got := walkMembersByCursor(t, s, limit, false, len(all)); !slices.Equal(got, all) {
			t.Fatalf("limit %d, oldest first: pages gave %v, want %v", limit, got, all)
		}
		if got := walkMembersByCursor(t, s, limit, true, len(all)); !slices.Equal(got, desc) {
			t.Fatalf("limit %d, newest first: pages gave %v, want %v", limit, got, desc)
		}
	}
	// A cursor inside the tie places the page by id within it, in either order.
	tie := baseTime.Add(time.Second)
	tests := []struct {
		after ports.MemberCursor
		desc  bool
		want  []domain.MemberID
	}{
		{ports.MemberCursor{CreatedAt: tie, ID: "a"}, false, []domain.MemberID{"b", "c"}},
		{ports.MemberCursor{CreatedAt: tie, ID: "b"}, false, []domain.MemberID{"c", "d"}},
		{ports.MemberCursor{CreatedAt: tie, ID: "c"}, false, []domain.MemberID{"d", "e"}},
		{ports.MemberCursor{CreatedAt: tie, ID: "c"}, true, []domain.MemberID{"b", "a"}},
		{ports.MemberCursor{CreatedAt: tie, ID: "a"}, true, []domain.MemberID{"o1-u1"}},
		{ports.MemberCursor{CreatedAt: tie, ID: "bb"}, false, []domain.MemberID{"c", "d"}},
		{ports.MemberCursor{CreatedAt: tie, ID: "bb"}, true, []domain.MemberID{"b", "a"}},
		// Positions before the first and after the last member.
		{ports.MemberCursor{CreatedAt: baseTime.Add(-time.Hour), ID: "z"}, false, []domain.MemberID{"o1-u1", "a"}},
		{ports.MemberCursor{CreatedAt: baseTime.Add(time.Hour), ID: ""}, true, []domain.MemberID{"f", "e"}},
		{ports.MemberCursor{CreatedAt: baseTime.Add(4 * time.Minute), ID: "f"}, false, nil},
		{ports.MemberCursor{CreatedAt: baseTime, ID: "o1-u1"}, true, nil},
	}
	for _, tt := range tests {
		q := ports.MemberQuery{Limit: 2, SortDesc: tt.desc, After: &tt.after}
		got, total := mustListMembers(t, s, "o1", q)
		if !slices.Equal(got, tt.want) && (len(got) != 0 || len(tt.want) != 0) {
			t.Fatalf("ListMembers(after %+v, desc %v) = %v, want %v", tt.after, tt.desc, got, tt.want)
		}
		if total != len(all) {
			t.Fatalf("ListMembers(after %+v) total = %d, want %d", tt.after, total, len(all))
		}
	}
	// A time in another zone, or with nanoseconds below the stores'
	// microseconds, is the same position as its normalised value.
	local := ports.MemberCursor{CreatedAt: tie.In(time.FixedZone("UTC+9", 9*60*60)).Add(999 * time.Nanosecond), ID: "a"}
	if got, _ := mustListMembers(t, s, "o1", ports.MemberQuery{Limit: 2, After: &local}); !slices.Equal(got, []domain.MemberID{"b", "c"}) {
		t.Fatalf("ListMembers(after %+v) = %v, want [b c]", local, got)
	}
}

func testMemberListCursorRemoved(t *testing.T, s Stores) {
	seedMemberPage(t, s)
	ids, _, next := mustListMembersPage(t, s, "o1", ports.MemberQuery{Limit: 2})
	if !slices.Equal(ids, []domain.MemberID{"o1-u1", "a"}) || next == nil {
		t.Fatalf("first page = %v, next %v", ids, next)
	}
	if _, err := s.Organizations.RemoveMember(context.Background(), "o1", "a"); err != nil {
		t.Fatal(err)
	}
	ids, total, _ := mustListMembersPage(t, s, "o1", ports.MemberQuery{Limit: 2, After: next})
	if !slices.Equal(ids, []domain.MemberID{"b", "c"}) || total != 6 {
		t.Fatalf("page after the removed member = %v of %d, want [b c] of 6", ids, total)
	}
}

func testMemberListOffsetNext(t *testing.T, s Stores) {
	seedMemberPage(t, s)
	// An offset page hands over to cursor paging: its next cursor continues it.
	ids, _, next := mustListMembersPage(t, s, "o1", ports.MemberQuery{Limit: 2, Offset: 2})
	if !slices.Equal(ids, []domain.MemberID{"b", "c"}) || next == nil {
		t.Fatalf("offset page = %v, next %v", ids, next)
	}
	ids, _, next = mustListMembersPage(t, s, "o1", ports.MemberQuery{Limit: 3, After: next})
	if !slices.Equal(ids, []domain.MemberID{"d", "e", "f"}) || next != nil {
		t.Fatalf("page after it = %v, next %v; want [d e f] and no next", ids, next)
	}
	// The last page has no next cursor, whether it is full or not.
	for _, q := range []ports.MemberQuery{{Limit: 2, Offset: 5}, {Limit: 3, Offset: 5}, {Limit: 7}, {Limit: 2, Offset: 7}} {
		if _, _, next := mustListMembersPage(t, s, "o1", q); next != nil {
			t.Fatalf("ListMembers(%+v) next = %+v, want none on the last page", q, *next)
		}
	}
}

func testMemberCount(t *testing.T, s Stores) {
	mustCreateOrg(t, s, "o1", "u1")
	mustCreateOrg(t, s, "o2", "u9")
	for i := range 4 {
		mustAddMember(t, s, "o1", domain.UserID(fmt.Sprintf("u%d", i+2)), rolesMember, baseTime)
	}
	if n := mustCountMembers(t, s, "o1"); n != 5 {
		t.Fatalf("CountMembers(o1) = %d, want 5", n)
	}
	if n := mustCountMembers(t, s, "o2"); n != 1 {
		t.Fatalf("CountMembers(o2) = %d, want 1", n)
	}
	if _, err := s.Organizations.RemoveMember(context.Background(), "o1", "o1-u3"); err != nil {
		t.Fatal(err)
	}
	if n := mustCountMembers(t, s, "o1"); n != 4 {
		t.Fatalf("CountMembers(o1) after a removal = %d, want 4", n)
	}
}

// assertMemberTotal fails unless CountMembers and the total of ListMembers
// (either way of paging) are want, and want is how many members a full
// walk of the organization finds.
func assertMemberTotal(t *testing.T, s Stores, org domain.OrganizationID, want int, when string) {
	t.Helper()
	if n := mustCountMembers(t, s, org); n != want {
		t.Fatalf("%s: CountMembers(%s) = %d, want %d", when, org, n, want)
	}
	ids, total := mustListMembers(t, s, org, ports.MemberQuery{Limit: 1000})
	if total != want || len(ids) != want {
		t.Fatalf("%s: ListMembers(%s) = %d members of %d, want %d of %d", when, org, len(ids), total, want, want)
	}
	after := &ports.MemberCursor{CreatedAt: baseTime.Add(-time.Hour), ID: ""}
	if _, total := mustListMembers(t, s, org, ports.MemberQuery{Limit: 1, After: after}); total != want {
		t.Fatalf("%s: ListMembers(%s, after) total = %d, want %d", when, org, total, want)
	}
}

func testMemberCountExact(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	assertMemberTotal(t, s, "o1", 1, "created with its owner")
	mustCreateOrg(t, s, "o2", "u9")

	// Added, one at a time, in both organizations.
	for i := range 3 {
		mustAddMember(t, s, "o1", domain.UserID(fmt.Sprintf("u%d", i+2)), rolesMember, baseTime.Add(time.Duration(i)*time.Minute))
	}
	mustAddMember(t, s, "o2", "u2", rolesMember, baseTime)
	assertMemberTotal(t, s, "o1", 4, "after three adds")
	assertMemberTotal(t, s, "o2", 2, "after one add")

	// Refused changes count nothing.
	err := s.Organizations.AddMember(ctx, mustMember(t, "dup", "o1", "u2", rolesMember, baseTime))
	mustBeCode(t, err, domain.ErrConflict, codeAlreadyMember)
	err = s.Organizations.AddMember(ctx, mustMember(t, "nobody", "o1", "ghost", rolesMember, baseTime))
	mustBeKind(t, err, domain.ErrNotFound)
	_, err = s.Organizations.RemoveMember(ctx, "o1", "o1-u1")
	mustBeLastOwner(t, err)
	assertMemberTotal(t, s, "o1", 4, "after refused changes")

	// Changing a member's roles or the organization itself counts nothing.
	if err := s.Organizations.UpdateMember(ctx, "o1", "o1-u2", func(m *domain.Member) error { return m.SetRoles(rolesAdmin) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Organizations.Update(ctx, "o1", func(o *domain.Organization) error { return o.Rename("Renamed", baseTime.Add(time.Hour)) }); err != nil {
		t.Fatal(err)
	}
	assertMemberTotal(t, s, "o1", 4, "after a role change and a rename")

	// Accepting an invitation adds one; one that fails adds none.
	mustCreateUsers(t, s, "u7")
	mustCreateInvitation(t, s, mustInvitation(t, "i1", "o1", "u7@example.com", "u1", inviteTTL, baseTime))
	at := baseTime.Add(time.Hour)
	if err := s.Organizations.AcceptInvitation(ctx, "i1", acceptAt(at), mustMember(t, "m7", "o1", "u7", rolesMember, at)); err != nil {
		t.Fatal(err)
	}
	assertMemberTotal(t, s, "o1", 5, "after an accepted invitation")
	mustCreateInvitation(t, s, mustInvitation(t, "i2", "o1", "u2@example.com", "u1", inviteTTL, baseTime))
	err = s.Organizations.AcceptInvitation(ctx, "i2", acceptAt(at), mustMember(t, "m2b", "o1", "u2", rolesMember, at))
	mustBeCode(t, err, domain.ErrConflict, codeAlreadyMember)
	assertMemberTotal(t, s, "o1", 5, "after a refused acceptance")

	// Removed.
	if _, err := s.Organizations.RemoveMember(ctx, "o1", "o1-u3"); err != nil {
		t.Fatal(err)
	}
	assertMemberTotal(t, s, "o1", 4, "after a removal")

	// Deleting a user removes them from every organization they are in.
	mustDeleteUser(t, s, "u2")
	assertMemberTotal(t, s, "o1", 3, "after deleting a member of both")
	assertMemberTotal(t, s, "o2", 1, "after deleting a member of both")
	// The user comes back and joins again.
	mustCreateUsers(t, s, "u2")
	mustAddMember(t, s, "o1", "u2", rolesMember, at)
	assertMemberTotal(t, s, "o1", 4, "after the user joined again")

	// A deleted organization has no members; its id may be used again.
	if err := s.Organizations.Delete(ctx, "o1"); err != nil {
		t.Fatal(err)
	}
	if n := mustCountMembers(t, s, "o1"); n != 0 {
		t.Fatalf("CountMembers(deleted o1) = %d, want 0", n)
	}
	assertMemberTotal(t, s, "o2", 1, "after the other organization was deleted")
	if err := s.Organizations.Create(ctx, mustOrg(t, "o1", "o1", baseTime), mustMember(t, "again", "o1", "u1", rolesOwner, baseTime)); err != nil {
		t.Fatal(err)
	}
	assertMemberTotal(t, s, "o1", 1, "recreated")
}

func testMemberCountParallel(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	mustCreateOrg(t, s, "o2", "u2")
	const workers = 8
	users := make([]domain.UserID, workers)
	for i := range users {
		users[i] = domain.UserID(fmt.Sprintf("w%d", i))
	}
	mustCreateUsers(t, s, users...)
	// Every worker joins both organizations at once: sixteen concurrent adds.
	errs := runParallel(2*workers, func(i int) error {
		org := domain.OrganizationID("o1")
		if i >= workers {
			org = "o2"
		}
		u := users[i%workers]
		return s.Organizations.AddMember(ctx, mustMember(t, string(org)+"-"+string(u), org, u, rolesMember, baseTime))
	})
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent AddMember: %v", err)
		}
	}
	assertMemberTotal(t, s, "o1", workers+1, "after concurrent adds")
	assertMemberTotal(t, s, "o2", workers+1, "after concurrent adds")

	// Half the workers leave o1 while the other half are deleted (leaving
	// both) and new users join o2, all at once.
	mustCreateUsers(t, s, "n0", "n1", "n2", "n3")
	errs = runParallel(workers+4, func(i int) error {
		switch {
		case i < workers/2:
			_, err := s.Organizations.RemoveMember(ctx, "o1", domain.MemberID("o1-"+string(users[i])))
			return err
		case i < workers:
			return s.Users.Delete(ctx, users[i])
		default:
			u := domain.UserID(fmt.Sprintf("n%d", i-workers))
			return s.Organizations.AddMember(ctx, mustMember(t, "o2-"+string(u), "o2", u, rolesMember, baseTime))
		}
	})
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent change: %v", err)
		}
	}
	assertMemberTotal(t, s, "o1", 1, "after concurrent removals and deletions")
	assertMemberTotal(t, s, "o2", 1+workers/2+4, "after concurrent deletions and adds")

	// One user is removed from an organization and deleted at once, and
	// another joins it: whichever comes first, the count ends exact and
	// neither waits for the other for ever (the deletion updates the counts
	// of the user's organizations, which the removal holds locked).
	for round := range 4 {
		x, y := domain.UserID(fmt.Sprintf("x%d", round)), domain.UserID(fmt.Sprintf("y%d", round))
		mustAddMember(t, s, "o1", x, rolesMember, baseTime)
		mustAddMember(t, s, "o2", x, rolesMember, baseTime)
		mustCreateUsers(t, s, y)
		errs = runParallel(3, func(i int) error {
			switch i {
			case 0:
				_, err := s.Organizations.RemoveMember(ctx, "o1", domain.MemberID("o1-"+string(x)))
				if errors.Is(err, domain.ErrNotFound) {
					return nil // the deletion came first
				}
				return err
			case 1:
				return s.Users.Delete(ctx, x)
			default:
				return s.Organizations.AddMember(ctx, mustMember(t, "o1-"+string(y), "o1", y, rolesMember, baseTime))
			}
		})
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: concurrent removal, deletion and add: %v", round, err)
			}
		}
		assertMemberTotal(t, s, "o1", 2+round, fmt.Sprintf("round %d: after a removal and deletion of one user", round))
		assertMemberTotal(t, s, "o2", 1+workers/2+4, fmt.Sprintf("round %d: after the deletion of a member", round))
	}
}

func testMemberUpdate(t *testing.T, s Stores) {
	mustCreateOrg(t, s, "o1", "u1")
	m := mustAddMember(t, s, "o1", "u2", rolesMember, baseTime.Add(time.Minute))
	err := s.Organizations.UpdateMember(context.Background(), "o1", m.ID(), func(m *domain.Member) error {
		return m.SetRoles([]domain.OrgRole{domain.OrgRoleAdmin, domain.OrgRoleOwner})
	})
	if err != nil {
		t.Fatal(err)
	}
	want := domain.RehydrateMember(m.ID(), "o1", "u2", []domain.OrgRole{domain.OrgRoleAdmin, domain.OrgRoleOwner}, m.CreatedAt())
	assertSameMember(t, mustGetMember(t, s, "o1", m.ID()), want)
}

func testMemberUpdateRollback(t *testing.T, s Stores) {
	mustCreateOrg(t, s, "o1", "u1")
	m := mustAddMember(t, s, "o1", "u2", rolesMember, baseTime)
	err := s.Organizations.UpdateMember(context.Background(), "o1", m.ID(), func(m *domain.Member) error {
		_ = m.SetRoles(rolesAdmin)
		return errOrgFn
	})
	if !errors.Is(err, errOrgFn) {
		t.Fatalf("UpdateMember error = %v, want the fn's error", err)
	}
	assertSameMember(t, mustGetMember(t, s, "o1", m.ID()), m)
}

func testMemberUpdateMissing(t *testing.T, s Stores) {
	ctx := context.Background()
	_, m1 := mustCreateOrg(t, s, "o1", "u1")
	mustCreateOrg(t, s, "o2", "u2")
	called := false
	fn := func(m *domain.Member) error { called = true; return m.SetRoles(rolesMember) }
	mustBeCode(t, s.Organizations.UpdateMember(ctx, "o1", "nothing", fn), domain.ErrNotFound, codeMemberNotFound)
	mustBeKind(t, s.Organizations.UpdateMember(ctx, "o2", m1.ID(), fn), domain.ErrNotFound)
	mustBeKind(t, s.Organizations.UpdateMember(ctx, "ghost", m1.ID(), fn), domain.ErrNotFound)
	if called {
		t.Fatal("fn was called for a member not of the organization")
	}
	assertSameMember(t, mustGetMember(t, s, "o1", m1.ID()), m1)
}

func testMemberDemoteLastOwner(t *testing.T, s Stores) {
	ctx := context.Background()
	_, m1 := mustCreateOrg(t, s, "o1", "u1")
	// An admin and an owner of another organization are no owners of o1.
	mustAddMember(t, s, "o1", "u2", rolesAdmin, baseTime)
	mustCreateOrg(t, s, "o2", "u3")
	mustAddMember(t, s, "o2", "u1", rolesOwner, baseTime)
	for _, roles := range [][]domain.OrgRole{rolesAdmin, rolesMember, {domain.OrgRoleAdmin, domain.OrgRoleMember}} {
		err := s.Organizations.UpdateMember(ctx, "o1", m1.ID(), func(m *domain.Member) error { return m.SetRoles(roles) })
		mustBeLastOwner(t, err)
		assertSameMember(t, mustGetMember(t, s, "o1", m1.ID()), m1)
	}
	// Adding a role to the last owner is fine.
	both := []domain.OrgRole{domain.OrgRoleMember, domain.OrgRoleOwner}
	if err := s.Organizations.UpdateMember(ctx, "o1", m1.ID(), func(m *domain.Member) error { return m.SetRoles(both) }); err != nil {
		t.Fatalf("keeping owner among the roles: %v", err)
	}
	if got := mustGetMember(t, s, "o1", m1.ID()).Roles(); !slices.Equal(got, both) {
		t.Fatalf("roles = %v, want %v", got, both)
	}
}

func testMemberDemoteOwner(t *testing.T, s Stores) {
	ctx := context.Background()
	_, m1 := mustCreateOrg(t, s, "o1", "u1")
	// Owner among other roles still counts as an owner.
	m2 := mustAddMember(t, s, "o1", "u2", []domain.OrgRole{domain.OrgRoleAdmin, domain.OrgRoleOwner}, baseTime)
	if err := s.Organizations.UpdateMember(ctx, "o1", m1.ID(), func(m *domain.Member) error { return m.SetRoles(rolesAdmin) }); err != nil {
		t.Fatalf("demoting an owner while another remains: %v", err)
	}
	if got := mustGetMember(t, s, "o1", m1.ID()).Roles(); !slices.Equal(got, rolesAdmin) {
		t.Fatalf("roles = %v, want [admin]", got)
	}
	// Now m2 is the last owner.
	err := s.Organizations.UpdateMember(ctx, "o1", m2.ID(), func(m *domain.Member) error { return m.SetRoles(rolesAdmin) })
	mustBeLastOwner(t, err)
}

func testMemberRemove(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	m := mustAddMember(t, s, "o1", "u2", rolesAdmin, baseTime.Add(time.Minute))
	got, err := s.Organizations.RemoveMember(ctx, "o1", m.ID())
	if err != nil {
		t.Fatal(err)
	}
	assertSameMember(t, got, m)
	_, err = s.Organizations.GetMember(ctx, "o1", m.ID())
	mustBeKind(t, err, domain.ErrNotFound)
	_, err = s.Organizations.GetMemberByUser(ctx, "o1", "u2")
	mustBeKind(t, err, domain.ErrNotFound)
	_, err = s.Organizations.RemoveMember(ctx, "o1", m.ID())
	mustBeKind(t, err, domain.ErrNotFound)
	// The user may join again.
	if err := s.Organizations.AddMember(ctx, m); err != nil {
		t.Fatalf("AddMember after removal: %v", err)
	}
}

func testMemberRemoveLastOwner(t *testing.T, s Stores) {
	ctx := context.Background()
	_, m1 := mustCreateOrg(t, s, "o1", "u1")
	mustAddMember(t, s, "o1", "u2", rolesAdmin, baseTime)
	_, err := s.Organizations.RemoveMember(ctx, "o1", m1.ID())
	mustBeLastOwner(t, err)
	assertSameMember(t, mustGetMember(t, s, "o1", m1.ID()), m1)
	if n := mustCountMembers(t, s, "o1"); n != 2 {
		t.Fatalf("CountMembers = %d, want 2", n)
	}
}

func testMemberRemoveOwner(t *testing.T, s Stores) {
	ctx := context.Background()
	_, m1 := mustCreateOrg(t, s, "o1", "u1")
	m2 := mustAddMember(t, s, "o1", "u2", rolesOwner, baseTime)
	if _, err := s.Organizations.RemoveMember(ctx, "o1", m1.ID()); err != nil {
		t.Fatalf("removing an owner while another remains: %v", err)
	}
	_, err := s.Organizations.RemoveMember(ctx, "o1", m2.ID())
	mustBeLastOwner(t, err)
}

func testMemberRemoveScoped(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	mustCreateOrg(t, s, "o2", "u2")
	m := mustAddMember(t, s, "o2", "u3", rolesMember, baseTime)
	_, err := s.Organizations.RemoveMember(ctx, "o1", m.ID())
	mustBeCode(t, err, domain.ErrNotFound, codeMemberNotFound)
	_, err = s.Organizations.RemoveMember(ctx, "ghost", m.ID())
	mustBeKind(t, err, domain.ErrNotFound)
	assertSameMember(t, mustGetMember(t, s, "o2", m.ID()), m)
}

// twoOwnerOrgs creates organizations race-0 … race-n-1, each owned by two
// members, and returns their member ids.
func twoOwnerOrgs(t *testing.T, s Stores, n int) [][2]domain.MemberID {
	t.Helper()
	out := make([][2]domain.MemberID, n)
	for i := range n {
		id := fmt.Sprintf("race-%d", i)
		_, m1 := mustCreateOrg(t, s, id, domain.UserID(id+"-a"))
		m2 := mustAddMember(t, s, domain.OrganizationID(id), domain.UserID(id+"-b"), rolesOwner, baseTime)
		out[i] = [2]domain.MemberID{m1.ID(), m2.ID()}
	}
	return out
}

// assertOneWinner checks that of two concurrent changes to the two owners
// of org, exactly one succeeded and the other was refused, and that one
// owner is left.
func assertOneWinner(t *testing.T, s Stores, org domain.OrganizationID, errs []error) {
	t.Helper()
	ok, refused := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, domain.ErrLastOwner):
			refused++
		default:
			t.Fatalf("%s: concurrent change: %v", org, err)
		}
	}
	if ok != 1 || refused != 1 {
		t.Fatalf("%s: %d changes succeeded and %d were refused, want 1 and 1", org, ok, refused)
	}
	page, err := s.Organizations.ListMembers(context.Background(), org, ports.MemberQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	owners := 0
	for _, mu := range page.Members {
		if mu.Member.IsOwner() {
			owners++
		}
	}
	if owners != 1 {
		t.Fatalf("%s: %d owners left, want 1", org, owners)
	}
}

func testMemberRemoveOwnersParallel(t *testing.T, s Stores) {
	const rounds = 5
	for i, ids := range twoOwnerOrgs(t, s, rounds) {
		org := domain.OrganizationID(fmt.Sprintf("race-%d", i))
		errs := runParallel(2, func(j int) error {
			_, err := s.Organizations.RemoveMember(context.Background(), org, ids[j])
			return err
		})
		assertOneWinner(t, s, org, errs)
		if n := mustCountMembers(t, s, org); n != 1 {
			t.Fatalf("%s: CountMembers = %d, want 1", org, n)
		}
	}
}

func testMemberDemoteOwnersParallel(t *testing.T, s Stores) {
	const rounds = 5
	for i, ids := range twoOwnerOrgs(t, s, rounds) {
		org := domain.OrganizationID(fmt.Sprintf("race-%d", i))
		errs := runParallel(2, func(j int) error {
			return s.Organizations.UpdateMember(context.Background(), org, ids[j], func(m *domain.Member) error { return m.SetRoles(rolesAdmin) })
		})
		assertOneWinner(t, s, org, errs)
	}
}

func testMemberUserCascade(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	mustCreateOrg(t, s, "o2", "u2")
	m := mustAddMember(t, s, "o1", "u3", rolesAdmin, baseTime)
	mustAddMember(t, s, "o2", "u3", rolesMember, baseTime)
	keep := mustAddMember(t, s, "o1", "u4", rolesMember, baseTime)
	inv := mustInvitation(t, "i1", "o1", inviteeEmail, "u3", inviteTTL, baseTime)
	mustCreateInvitation(t, s, inv)

	mustDeleteUser(t, s, "u3")
	_, err := s.Organizations.GetMember(ctx, "o1", m.ID())
	mustBeKind(t, err, domain.ErrNotFound)
	_, err = s.Organizations.GetMemberByUser(ctx, "o2", "u3")
	mustBeKind(t, err, domain.ErrNotFound)
	if got := mustListByUser(t, s, "u3"); len(got) != 0 {
		t.Fatalf("ListByUser(deleted user) = %v, want none", got)
	}
	if n := mustCountMembers(t, s, "o1"); n != 2 {
		t.Fatalf("CountMembers(o1) = %d, want 2", n)
	}
	assertSameMember(t, mustGetMember(t, s, "o1", keep.ID()), keep)
	// The invitation stays, without its inviter.
	got := mustGetInvitation(t, s, "i1")
	if got.InviterID() != "" {
		t.Fatalf("invitation inviter = %q after the inviter was deleted, want none", got.InviterID())
	}
	want := domain.RehydrateInvitation(inv.ID(), inv.OrganizationID(), inv.Email(), inv.Roles(), inv.Status(), "", inv.ExpiresAt(), inv.CreatedAt(), inv.UpdatedAt())
	assertSameInvitation(t, got, want)
	// The user may come back and join again.
	mustCreateUsers(t, s, "u3")
	if err := s.Organizations.AddMember(ctx, m); err != nil {
		t.Fatalf("AddMember after the user was re-created: %v", err)
	}
}

// --- Invitations ---

func testInvitationRoundTrip(t *testing.T, s Stores) {
	mustCreateOrg(t, s, "o1", "u1")
	local := time.Date(2026, 7, 8, 9, 10, 11, 654321987, time.FixedZone("UTC+9", 9*60*60))
	inv := mustInvitation(t, "i1", "o1", inviteeEmail, "u1", inviteTTL, local)
	mustCreateInvitation(t, s, inv)
	got := mustGetInvitation(t, s, "i1")
	assertSameInvitation(t, got, inv)
	assertTime(t, "CreatedAt", got.CreatedAt(), local.Truncate(time.Microsecond))
	assertTime(t, "ExpiresAt", got.ExpiresAt(), local.Add(inviteTTL).Truncate(time.Microsecond))
	if got.Status() != domain.InvitationPending {
		t.Fatalf("status = %s, want pending", got.Status())
	}
	// An invitation without an inviter is stored as one.
	bare := mustInvitation(t, "i2", "o1", inviteeEmail, "", inviteTTL, local)
	mustCreateInvitation(t, s, bare)
	assertSameInvitation(t, mustGetInvitation(t, s, "i2"), bare)
	_, err := s.Organizations.GetInvitation(context.Background(), "nothing")
	mustBeKind(t, err, domain.ErrNotFound)
}

func testInvitationCreateMissing(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	mustBeKind(t, s.Organizations.CreateInvitation(ctx, mustInvitation(t, "i1", "ghost", inviteeEmail, "u1", inviteTTL, baseTime)), domain.ErrNotFound)
	mustBeKind(t, s.Organizations.CreateInvitation(ctx, mustInvitation(t, "i2", "o1", inviteeEmail, "ghost", inviteTTL, baseTime)), domain.ErrNotFound)
	for _, id := range []domain.InvitationID{"i1", "i2"} {
		_, err := s.Organizations.GetInvitation(ctx, id)
		mustBeKind(t, err, domain.ErrNotFound)
	}
}

func testInvitationDuplicate(t *testing.T, s Stores) {
	mustCreateOrg(t, s, "o1", "u1")
	first := mustInvitation(t, "i1", "o1", inviteeEmail, "u1", inviteTTL, baseTime)
	mustCreateInvitation(t, s, first)
	dup := mustInvitation(t, "i1", "o1", "other@example.com", "u1", inviteTTL, baseTime.Add(time.Minute))
	mustBeKind(t, s.Organizations.CreateInvitation(context.Background(), dup), domain.ErrConflict)
	assertSameInvitation(t, mustGetInvitation(t, s, "i1"), first)
}

func testInvitationUpdate(t *testing.T, s Stores) {
	mustCreateOrg(t, s, "o1", "u1")
	inv := mustInvitation(t, "i1", "o1", inviteeEmail, "u1", inviteTTL, baseTime)
	mustCreateInvitation(t, s, inv)
	later := baseTime.Add(time.Hour)
	err := s.Organizations.UpdateInvitation(context.Background(), "i1", func(inv *domain.Invitation) error {
		inv.Renew(rolesAdmin, 2*inviteTTL, later)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := domain.RehydrateInvitation("i1", "o1", inviteeEmail, rolesAdmin, domain.InvitationPending, "u1", later.Add(2*inviteTTL), baseTime, later)
	assertSameInvitation(t, mustGetInvitation(t, s, "i1"), want)
	if err := s.Organizations.UpdateInvitation(context.Background(), "i1", func(inv *domain.Invitation) error {
		return inv.Answer(domain.InvitationCanceled, later.Add(time.Minute))
	}); err != nil {
		t.Fatal(err)
	}
	if got := mustGetInvitation(t, s, "i1"); got.Status() != domain.InvitationCanceled {
		t.Fatalf("status = %s, want canceled", got.Status())
	}
}

func testInvitationUpdateRollback(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	inv := mustInvitation(t, "i1", "o1", inviteeEmail, "u1", inviteTTL, baseTime)
	mustCreateInvitation(t, s, inv)
	err := s.Organizations.UpdateInvitation(ctx, "i1", func(inv *domain.Invitation) error {
		_ = inv.Answer(domain.InvitationRejected, baseTime.Add(time.Minute))
		return errOrgFn
	})
	if !errors.Is(err, errOrgFn) {
		t.Fatalf("UpdateInvitation error = %v, want the fn's error", err)
	}
	assertSameInvitation(t, mustGetInvitation(t, s, "i1"), inv)
	called := false
	err = s.Organizations.UpdateInvitation(ctx, "nothing", func(*domain.Invitation) error { called = true; return nil })
	mustBeKind(t, err, domain.ErrNotFound)
	if called {
		t.Fatal("fn was called for a missing invitation")
	}
}

// acceptAt answers an invitation as accepted at at.
func acceptAt(at time.Time) func(inv *domain.Invitation) error {
	return func(inv *domain.Invitation) error { return inv.Answer(domain.InvitationAccepted, at) }
}

func testInvitationAccept(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	mustCreateUsers(t, s, "u2")
	inv := mustInvitation(t, "i1", "o1", "u2@example.com", "u1", inviteTTL, baseTime)
	mustCreateInvitation(t, s, inv)
	at := baseTime.Add(time.Hour)
	m := mustMember(t, "m2", "o1", "u2", inv.Roles(), at)
	if err := s.Organizations.AcceptInvitation(ctx, "i1", acceptAt(at), m); err != nil {
		t.Fatal(err)
	}
	want := domain.RehydrateInvitation("i1", "o1", "u2@example.com", inv.Roles(), domain.InvitationAccepted, "u1", inv.ExpiresAt(), baseTime, at)
	assertSameInvitation(t, mustGetInvitation(t, s, "i1"), want)
	got, err := s.Organizations.GetMemberByUser(ctx, "o1", "u2")
	if err != nil {
		t.Fatal(err)
	}
	assertSameMember(t, got, m)
	// Answered, it is no longer pending, and cannot be accepted again.
	if n, err := s.Organizations.CountPendingInvitations(ctx, "o1", at); err != nil || n != 0 {
		t.Fatalf("CountPendingInvitations = %d, %v; want 0", n, err)
	}
	err = s.Organizations.AcceptInvitation(ctx, "i1", acceptAt(at.Add(time.Minute)), mustMember(t, "m3", "o1", "u2", rolesMember, at))
	if !errors.Is(err, domain.ErrInvitationNotOpen) {
		t.Fatalf("accepting twice = %v, want ErrInvitationNotOpen from fn", err)
	}
}

func testInvitationAcceptFnFails(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	mustCreateUsers(t, s, "u2")
	// Expired: the domain refuses to answer it.
	inv := mustInvitation(t, "i1", "o1", "u2@example.com", "u1", time.Hour, baseTime)
	mustCreateInvitation(t, s, inv)
	late := baseTime.Add(2 * time.Hour)
	err := s.Organizations.AcceptInvitation(ctx, "i1", acceptAt(late), mustMember(t, "m2", "o1", "u2", rolesMember, late))
	if !errors.Is(err, domain.ErrInvitationNotOpen) {
		t.Fatalf("AcceptInvitation error = %v, want the fn's ErrInvitationNotOpen", err)
	}
	// A fn that changes the invitation and then fails saves nothing either.
	err = s.Organizations.AcceptInvitation(ctx, "i1", func(inv *domain.Invitation) error {
		inv.Renew(rolesAdmin, time.Hour, late)
		return errOrgFn
	}, mustMember(t, "m2", "o1", "u2", rolesMember, late))
	if !errors.Is(err, errOrgFn) {
		t.Fatalf("AcceptInvitation error = %v, want the fn's error", err)
	}
	assertSameInvitation(t, mustGetInvitation(t, s, "i1"), inv)
	_, err = s.Organizations.GetMemberByUser(ctx, "o1", "u2")
	mustBeKind(t, err, domain.ErrNotFound)
}

func testInvitationAcceptMember(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	existing := mustAddMember(t, s, "o1", "u2", rolesMember, baseTime)
	inv := mustInvitation(t, "i1", "o1", "u2@example.com", "u1", inviteTTL, baseTime)
	mustCreateInvitation(t, s, inv)
	at := baseTime.Add(time.Minute)
	err := s.Organizations.AcceptInvitation(ctx, "i1", acceptAt(at), mustMember(t, "m-new", "o1", "u2", rolesAdmin, at))
	mustBeCode(t, err, domain.ErrConflict, codeAlreadyMember)
	assertSameInvitation(t, mustGetInvitation(t, s, "i1"), inv)
	assertSameMember(t, mustGetMember(t, s, "o1", existing.ID()), existing)
	_, err = s.Organizations.GetMember(ctx, "o1", "m-new")
	mustBeKind(t, err, domain.ErrNotFound)
}

func testInvitationAcceptMissingUser(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	inv := mustInvitation(t, "i1", "o1", "ghost@example.com", "u1", inviteTTL, baseTime)
	mustCreateInvitation(t, s, inv)
	at := baseTime.Add(time.Minute)
	err := s.Organizations.AcceptInvitation(ctx, "i1", acceptAt(at), mustMember(t, "m2", "o1", "ghost", rolesMember, at))
	mustBeKind(t, err, domain.ErrNotFound)
	assertSameInvitation(t, mustGetInvitation(t, s, "i1"), inv)
}

func testInvitationAcceptMissing(t *testing.T, s Stores) {
	mustCreateOrg(t, s, "o1", "u1")
	mustCreateUsers(t, s, "u2")
	called := false
	err := s.Organizations.AcceptInvitation(context.Background(), "nothing", func(*domain.Invitation) error { called = true; return nil },
		mustMember(t, "m2", "o1", "u2", rolesMember, baseTime))
	mustBeCode(t, err, domain.ErrNotFound, codeInvitationNotFound)
	if called {
		t.Fatal("fn was called for a missing invitation")
	}
	if n := mustCountMembers(t, s, "o1"); n != 1 {
		t.Fatalf("CountMembers = %d, want 1", n)
	}
}

func testInvitationList(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	mustCreateOrg(t, s, "o2", "u2")
	// i2 and i3 share an instant (ties broken by id, descending); answered
	// and expired invitations are listed too.
	mustCreateInvitation(t, s, mustInvitation(t, "i1", "o1", inviteeEmail, "u1", inviteTTL, baseTime))
	mustCreateInvitation(t, s, mustInvitation(t, "i3", "o1", "b@example.com", "u1", time.Minute, baseTime.Add(time.Hour)))
	mustCreateInvitation(t, s, mustInvitation(t, "i2", "o1", "c@example.com", "u1", inviteTTL, baseTime.Add(time.Hour)))
	mustCreateInvitation(t, s, mustInvitation(t, "i4", "o1", "d@example.com", "", inviteTTL, baseTime.Add(2*time.Hour)))
	mustCreateInvitation(t, s, mustInvitation(t, "x1", "o2", inviteeEmail, "u2", inviteTTL, baseTime.Add(3*time.Hour)))
	if err := s.Organizations.UpdateInvitation(ctx, "i4", func(inv *domain.Invitation) error {
		return inv.Answer(domain.InvitationRejected, baseTime.Add(2*time.Hour))
	}); err != nil {
		t.Fatal(err)
	}
	list, err := s.Organizations.ListInvitations(ctx, "o1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := invitationIDs(list), []domain.InvitationID{"i4", "i3", "i2", "i1"}; !slices.Equal(got, want) {
		t.Fatalf("ListInvitations(o1) = %v, want %v (newest first)", got, want)
	}
	assertSameInvitation(t, list[3], mustGetInvitation(t, s, "i1"))
	if list, err := s.Organizations.ListInvitations(ctx, "ghost"); err != nil || len(list) != 0 {
		t.Fatalf("ListInvitations(ghost) = %v, %v; want none", invitationIDs(list), err)
	}
}

// seedPending invites invitee to o1 and o2 in several states and returns
// the instant to evaluate them at. Open at now: p1 (o1), p2 (o2, newer),
// p3 (o1, newest). Closed: expired, ends_now, accepted, canceled; other is
// to someone else.
func seedPending(t *testing.T, s Stores) time.Time {
	t.Helper()
	ctx := context.Background()
	mustCreateOrg(t, s, "o1", "u1")
	mustCreateOrg(t, s, "o2", "u2")
	now := baseTime.Add(24 * time.Hour)
	mustCreateInvitation(t, s, mustInvitation(t, "p1", "o1", inviteeEmail, "u1", inviteTTL, baseTime))
	mustCreateInvitation(t, s, mustInvitation(t, "p2", "o2", inviteeEmail, "u2", inviteTTL, baseTime.Add(time.Hour)))
	// p3 expires a microsecond after now; ends_now expires at now, so it is closed.
	mustCreateInvitation(t, s, mustInvitation(t, "p3", "o1", inviteeEmail, "u1", time.Hour+time.Microsecond, now.Add(-time.Hour)))
	mustCreateInvitation(t, s, mustInvitation(t, "expired", "o1", inviteeEmail, "u1", time.Hour, baseTime.Add(2*time.Hour)))
	mustCreateInvitation(t, s, mustInvitation(t, "ends_now", "o1", inviteeEmail, "u1", 2*time.Hour, now.Add(-2*time.Hour)))
	mustCreateInvitation(t, s, mustInvitation(t, "accepted", "o1", inviteeEmail, "u1", inviteTTL, baseTime.Add(3*time.Hour)))
	mustCreateInvitation(t, s, mustInvitation(t, "canceled", "o2", inviteeEmail, "u2", inviteTTL, baseTime.Add(4*time.Hour)))
	mustCreateInvitation(t, s, mustInvitation(t, "other", "o1", "other@example.com", "u1", inviteTTL, baseTime.Add(5*time.Hour)))
	for id, status := range map[domain.InvitationID]domain.InvitationStatus{"accepted": domain.InvitationAccepted, "canceled": domain.InvitationCanceled} {
		if err := s.Organizations.UpdateInvitation(ctx, id, func(inv *domain.Invitation) error {
			return inv.Answer(status, baseTime.Add(6*time.Hour))
		}); err != nil {
			t.Fatal(err)
		}
	}
	return now
}

func testInvitationListPending(t *testing.T, s Stores) {
	now := seedPending(t, s)
	want := []domain.InvitationID{"p3", "p2", "p1"}
	for _, at := range []time.Time{now, now.In(time.FixedZone("UTC-7", -7*60*60))} {
		list, err := s.Organizations.ListPendingInvitationsByEmail(context.Background(), inviteeEmail, at)
		if err != nil {
			t.Fatal(err)
		}
		if got := invitationIDs(list); !slices.Equal(got, want) {
			t.Fatalf("ListPendingInvitationsByEmail at %s = %v, want %v", at, got, want)
		}
	}
	list, err := s.Organizations.ListPendingInvitationsByEmail(context.Background(), "nobody@example.com", now)
	if err != nil || len(list) != 0 {
		t.Fatalf("ListPendingInvitationsByEmail(nobody) = %v, %v; want none", invitationIDs(list), err)
	}
	// A microsecond later p3 has expired.
	list, err = s.Organizations.ListPendingInvitationsByEmail(context.Background(), inviteeEmail, now.Add(time.Microsecond))
	if got := invitationIDs(list); err != nil || !slices.Equal(got, want[1:]) {
		t.Fatalf("ListPendingInvitationsByEmail a microsecond later = %v, %v; want %v", got, err, want[1:])
	}
}

func testInvitationFindPending(t *testing.T, s Stores) {
	ctx := context.Background()
	now := seedPending(t, s)
	for org, want := range map[domain.OrganizationID]domain.InvitationID{"o1": "p3", "o2": "p2"} {
		got, err := s.Organizations.FindPendingInvitation(ctx, org, inviteeEmail, now)
		if err != nil {
			t.Fatalf("FindPendingInvitation(%s): %v", org, err)
		}
		if got.ID() != want {
			t.Fatalf("FindPendingInvitation(%s) = %s, want the newest open one, %s", org, got.ID(), want)
		}
		assertSameInvitation(t, got, mustGetInvitation(t, s, want))
	}
	got, err := s.Organizations.FindPendingInvitation(ctx, "o1", inviteeEmail, now.Add(time.Microsecond))
	if err != nil || got.ID() != "p1" {
		t.Fatalf("FindPendingInvitation(o1) a microsecond later = %v, %v; want p1", got, err)
	}
	_, err = s.Organizations.FindPendingInvitation(ctx, "o2", "other@example.com", now)
	mustBeKind(t, err, domain.ErrNotFound)
	_, err = s.Organizations.FindPendingInvitation(ctx, "ghost", inviteeEmail, now)
	mustBeKind(t, err, domain.ErrNotFound)
}

func testInvitationCountPending(t *testing.T, s Stores) {
	ctx := context.Background()
	now := seedPending(t, s)
	for org, want := range map[domain.OrganizationID]int{"o1": 3, "o2": 1, "ghost": 0} {
		// o1: p1, p3 and other (to another address, still pending).
		n, err := s.Organizations.CountPendingInvitations(ctx, org, now)
		if err != nil || n != want {
			t.Fatalf("CountPendingInvitations(%s) = %d, %v; want %d", org, n, err, want)
		}
	}
	if n, err := s.Organizations.CountPendingInvitations(ctx, "o1", now.Add(time.Microsecond)); err != nil || n != 2 {
		t.Fatalf("CountPendingInvitations(o1) a microsecond later = %d, %v; want 2", n, err)
	}
}

func testOrgCopies(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "u2")
	orig := mustOrg(t, "o1", "o1", baseTime)
	want := mustOrg(t, "o1", "o1", baseTime)
	m := mustMember(t, "m1", "o1", "u1", rolesOwner, baseTime)
	wantMember := mustMember(t, "m1", "o1", "u1", rolesOwner, baseTime)
	if err := s.Organizations.Create(ctx, orig, m); err != nil {
		t.Fatal(err)
	}
	// The caller's values are not the stored ones.
	_ = orig.Rename("Mutated after create", baseTime.Add(time.Minute))
	_ = m.SetRoles(rolesMember)

	got := mustGetOrg(t, s, "o1")
	assertSameOrg(t, got, want)
	_ = got.Rename("Mutated after get", baseTime.Add(time.Minute))
	list, err := s.Organizations.ListByUser(ctx, "u1")
	if err != nil || len(list) != 1 {
		t.Fatalf("ListByUser = %v, %v", orgIDs(list), err)
	}
	assertSameOrg(t, list[0], want)
	_ = list[0].Rename("Mutated after list", baseTime.Add(time.Minute))
	var inFn *domain.Organization
	_ = s.Organizations.Update(ctx, "o1", func(o *domain.Organization) error { inFn = o; return errOrgFn })
	_ = inFn.Rename("Mutated after update", baseTime)
	assertSameOrg(t, mustGetOrg(t, s, "o1"), want)

	gotMember := mustGetMember(t, s, "o1", "m1")
	assertSameMember(t, gotMember, wantMember)
	_ = gotMember.SetRoles(rolesMember)
	members, err := s.Organizations.ListMembers(ctx, "o1", ports.MemberQuery{Limit: 10})
	if err != nil || len(members.Members) != 1 {
		t.Fatalf("ListMembers = %d, %v", len(members.Members), err)
	}
	page := members.Members
	assertSameMember(t, page[0].Member, wantMember)
	_ = page[0].Member.SetRoles(rolesMember)
	_ = page[0].User.Rename("Mutated user", baseTime)
	var memberInFn *domain.Member
	_ = s.Organizations.UpdateMember(ctx, "o1", "m1", func(m *domain.Member) error { memberInFn = m; return errOrgFn })
	_ = memberInFn.SetRoles(rolesMember)
	assertSameMember(t, mustGetMember(t, s, "o1", "m1"), wantMember)
	if u, _ := s.Users.Get(ctx, "u1"); u.Name() != "User u1" {
		t.Fatalf("stored user changed with a returned value: %q", u.Name())
	}

	inv := mustInvitation(t, "i1", "o1", inviteeEmail, "u1", inviteTTL, baseTime)
	wantInv := mustInvitation(t, "i1", "o1", inviteeEmail, "u1", inviteTTL, baseTime)
	mustCreateInvitation(t, s, inv)
	inv.Renew(rolesAdmin, time.Hour, baseTime.Add(time.Minute))
	gotInv := mustGetInvitation(t, s, "i1")
	assertSameInvitation(t, gotInv, wantInv)
	_ = gotInv.Answer(domain.InvitationAccepted, baseTime)
	invs, err := s.Organizations.ListInvitations(ctx, "o1")
	if err != nil || len(invs) != 1 {
		t.Fatalf("ListInvitations = %v, %v", invitationIDs(invs), err)
	}
	invs[0].Renew(rolesAdmin, time.Hour, baseTime.Add(time.Minute))
	var invInFn *domain.Invitation
	_ = s.Organizations.UpdateInvitation(ctx, "i1", func(inv *domain.Invitation) error { invInFn = inv; return errOrgFn })
	invInFn.Renew(rolesAdmin, time.Hour, baseTime.Add(time.Minute))
	assertSameInvitation(t, mustGetInvitation(t, s, "i1"), wantInv)
}
