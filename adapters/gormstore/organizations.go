package gormstore

import (
	"context"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.OrganizationRepository = (*OrganizationRepository)(nil)

// OrganizationRepository stores organizations, members and invitations in
// the organizations, members and invitations tables. Deleting an
// organization cascades to its members and invitations, and deleting a user
// to their memberships, by the foreign keys. organizations.member_count is
// kept by triggers on members (see the migration), so no code here touches
// it and no way of adding or removing a member can miss it.
type OrganizationRepository struct {
	db *gorm.DB
	// memberPageSQL reads one page of an organization's members with their
	// users, indexed [descending][from a cursor]; see
	// NewOrganizationRepository.
	memberPageSQL [2][2]string
	// orgID is organizations.id as List orders and compares it: in the "C"
	// collation on PostgreSQL.
	orgID string
}

// NewOrganizationRepository returns an OrganizationRepository on db.
func NewOrganizationRepository(db *gorm.DB) *OrganizationRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	// The member page selects every column of both row models, named from
	// their schemas, so the join follows the models as they change.
	cols := prefixedColumns(db, &memberRow{}, "m", "m_") + ", " + prefixedColumns(db, &userRow{}, "u", "u_")
	// On PostgreSQL the id is compared and sorted in the "C" collation, byte
	// by byte as SQLite and the memory store compare it, whatever the
	// database's locale; members_organization_id_created_at_idx indexes it
	// in that collation, so both the order and the cursor condition read
	// through the index.
	id, orgID := "m.id", "id"
	if DialectOf(db) == DialectPostgres {
		id, orgID = `m.id COLLATE "C"`, `id COLLATE "C"`
	}
	// A cursor page starts after a position with a row-value comparison,
	// which both dialects turn into a range of the index after the equality
	// on organization_id (see TestOrganizationMemberQueries_use_indexes).
	page := func(desc, cursor bool) string {
		dir, cmp := "ASC", ">"
		if desc {
			dir, cmp = "DESC", "<"
		}
		q := "SELECT " + cols + " FROM members m JOIN users u ON u.id = m.user_id WHERE m.organization_id = ?"
		if cursor {
			q += " AND (m.created_at, " + id + ") " + cmp + " (?, ?)"
		}
		q += " ORDER BY m.created_at " + dir + ", " + id + " " + dir + " LIMIT ?"
		if !cursor {
			q += " OFFSET ?"
		}
		return q
	}
	return &OrganizationRepository{db: db, orgID: orgID, memberPageSQL: [2][2]string{
		{page(false, false), page(false, true)},
		{page(true, false), page(true, true)},
	}}
}

// prefixedColumns returns "alias.col AS prefixcol, …" for every column of model.
func prefixedColumns(db *gorm.DB, model any, alias, prefix string) string {
	stmt := &gorm.Statement{DB: db}
	if err := stmt.Parse(model); err != nil {
		panic("gormstore: parse row model: " + err.Error())
	}
	cols := make([]string, 0, len(stmt.Schema.DBNames))
	for _, name := range stmt.Schema.DBNames {
		cols = append(cols, alias+"."+name+" AS "+prefix+name)
	}
	return strings.Join(cols, ", ")
}

// errMemberOfAnotherOrg stops a member change aimed at another organization.
var errMemberOfAnotherOrg = errors.New("the member belongs to another organization")

// ownerRolePattern matches a comma-separated role list that holds owner,
// once the list is wrapped in commas.
const ownerRolePattern = "%," + string(domain.OrgRoleOwner) + ",%"

// organizationRow's id is indexed in the "C" collation on PostgreSQL, with
// created_at, for List (see NewOrganizationRepository).
type organizationRow struct {
	ID       string `gorm:"column:id;primaryKey;type:text;index:organizations_created_at_idx,priority:2"`
	Name     string `gorm:"column:name;not null"`
	Slug     string `gorm:"column:slug;not null;uniqueIndex:organizations_slug_key"`
	Logo     string `gorm:"column:logo;not null"`
	Metadata string `gorm:"column:metadata;not null"`
	// RequireTwoFactor is the members' second-factor rule.
	RequireTwoFactor bool      `gorm:"column:require_two_factor;not null"`
	CreatedAt        time.Time `gorm:"column:created_at;not null;autoCreateTime:false;index:organizations_created_at_idx,priority:1"`
	UpdatedAt        time.Time `gorm:"column:updated_at;not null;autoUpdateTime:false"`
	// MemberCount is read only: the triggers on members keep it, and no
	// insert or update of the row writes it.
	MemberCount int `gorm:"column:member_count;not null;->"`
}

func (organizationRow) TableName() string { return "organizations" }

func organizationFromDomain(o *domain.Organization) organizationRow {
	return organizationRow{
		ID: string(o.ID()), Name: o.Name(), Slug: o.Slug(), Logo: o.Logo(), Metadata: o.Metadata(),
		RequireTwoFactor: o.RequiresTwoFactor(), CreatedAt: o.CreatedAt(), UpdatedAt: o.UpdatedAt(),
	}
}

func (r organizationRow) toDomain() *domain.Organization {
	return domain.RehydrateOrganization(domain.OrganizationID(r.ID), r.Name, r.Slug, r.Logo, r.Metadata, r.RequireTwoFactor, r.CreatedAt, r.UpdatedAt)
}

// memberRow's id is indexed in the "C" collation on PostgreSQL (see
// NewOrganizationRepository).
type memberRow struct {
	ID             string    `gorm:"column:id;primaryKey;type:text;index:members_organization_id_created_at_idx,priority:3"`
	OrganizationID string    `gorm:"column:organization_id;not null;uniqueIndex:members_organization_id_user_id_key,priority:1;index:members_organization_id_created_at_idx,priority:1"`
	UserID         string    `gorm:"column:user_id;not null;uniqueIndex:members_organization_id_user_id_key,priority:2;index:members_user_id_idx"`
	Role           string    `gorm:"column:role;not null"`
	CreatedAt      time.Time `gorm:"column:created_at;not null;autoCreateTime:false;index:members_organization_id_created_at_idx,priority:2"`
}

func (memberRow) TableName() string { return "members" }

func memberFromDomain(m *domain.Member) memberRow {
	return memberRow{
		ID: string(m.ID()), OrganizationID: string(m.OrganizationID()), UserID: string(m.UserID()),
		Role: domain.JoinOrgRoles(m.Roles()), CreatedAt: m.CreatedAt(),
	}
}

func (r memberRow) toDomain() *domain.Member {
	return domain.RehydrateMember(domain.MemberID(r.ID), domain.OrganizationID(r.OrganizationID), domain.UserID(r.UserID),
		domain.SplitOrgRoles(r.Role), r.CreatedAt)
}

// memberUserRow is one row of a member page: the membership and its user.
type memberUserRow struct {
	Member memberRow `gorm:"embedded;embeddedPrefix:m_"`
	User   userRow   `gorm:"embedded;embeddedPrefix:u_"`
}

type invitationRow struct {
	ID             string `gorm:"column:id;primaryKey;type:text"`
	OrganizationID string `gorm:"column:organization_id;not null;index:invitations_organization_id_created_at_idx,priority:1"`
	Email          string `gorm:"column:email;not null;index:invitations_email_status_idx,priority:1"`
	Role           string `gorm:"column:role;not null"`
	Status         string `gorm:"column:status;not null;index:invitations_email_status_idx,priority:2"`
	// InviterID is NULL once the inviting user is deleted.
	InviterID *string   `gorm:"column:inviter_id;index:invitations_inviter_id_idx"`
	ExpiresAt time.Time `gorm:"column:expires_at;not null"`
	CreatedAt time.Time `gorm:"column:created_at;not null;autoCreateTime:false;index:invitations_organization_id_created_at_idx,priority:2"`
	UpdatedAt time.Time `gorm:"column:updated_at;not null;autoUpdateTime:false"`
}

func (invitationRow) TableName() string { return "invitations" }

func invitationFromDomain(inv *domain.Invitation) invitationRow {
	return invitationRow{
		ID: string(inv.ID()), OrganizationID: string(inv.OrganizationID()), Email: string(inv.Email()),
		Role: domain.JoinOrgRoles(inv.Roles()), Status: string(inv.Status()), InviterID: nullIfEmpty(string(inv.InviterID())),
		ExpiresAt: inv.ExpiresAt(), CreatedAt: inv.CreatedAt(), UpdatedAt: inv.UpdatedAt(),
	}
}

func (r invitationRow) toDomain() *domain.Invitation {
	return domain.RehydrateInvitation(domain.InvitationID(r.ID), domain.OrganizationID(r.OrganizationID), domain.Email(r.Email),
		domain.SplitOrgRoles(r.Role), domain.InvitationStatus(r.Status), domain.UserID(emptyIfNull(r.InviterID)),
		r.ExpiresAt, r.CreatedAt, r.UpdatedAt)
}

// forUpdate locks the rows q reads until the transaction ends, on
// PostgreSQL. SQLite needs nothing: its immediate transactions hold the
// database's write lock from the start, so they run one at a time.
func forUpdate(q *gorm.DB) *gorm.DB {
	if DialectOf(q) == DialectPostgres {
		return q.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
	}
	return q
}

// lockOrganization takes the organization's lock inside tx: every change to
// its members runs under it, so that the owner rule holds under concurrency.
func lockOrganization(tx *gorm.DB, id domain.OrganizationID) error {
	var row organizationRow
	err := forUpdate(tx).Select("id").Where("id = ?", string(id)).Take(&row).Error
	return convertErr("organizations.lock", err, domain.ErrOrganizationNotFound, nil)
}

// Create implements ports.OrganizationRepository: the organization and its
// owner's membership are inserted in one transaction.
func (r *OrganizationRepository) Create(ctx context.Context, org *domain.Organization, owner *domain.Member) error {
	if owner.OrganizationID() != org.ID() {
		return domain.Internal("gormstore: organizations.create", errMemberOfAnotherOrg)
	}
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		orgRow := organizationFromDomain(org)
		if err := tx.Create(&orgRow).Error; err != nil {
			return convertErr("organizations.create", err, nil, domain.ErrOrganizationExists)
		}
		m := memberFromDomain(owner)
		return convertErr("organizations.create_owner", tx.Create(&m).Error, domain.ErrUserNotFound, domain.ErrAlreadyMember)
	})
	return convertErr("organizations.create", err, nil, nil)
}

// Get implements ports.OrganizationRepository.
func (r *OrganizationRepository) Get(ctx context.Context, id domain.OrganizationID) (*domain.Organization, error) {
	return getOrganization(conn(ctx, r.db), "id = ?", string(id))
}

// GetBySlug implements ports.OrganizationRepository.
func (r *OrganizationRepository) GetBySlug(ctx context.Context, slug string) (*domain.Organization, error) {
	return getOrganization(conn(ctx, r.db), "slug = ?", slug)
}

func getOrganization(db *gorm.DB, where string, arg string) (*domain.Organization, error) {
	var row organizationRow
	if err := db.Where(where, arg).Take(&row).Error; err != nil {
		return nil, convertErr("organizations.get", err, domain.ErrOrganizationNotFound, nil)
	}
	return row.toDomain(), nil
}

// SlugTaken implements ports.OrganizationRepository.
func (r *OrganizationRepository) SlugTaken(ctx context.Context, slug string) (bool, error) {
	var n int64
	if err := conn(ctx, r.db).Model(&organizationRow{}).Where("slug = ?", slug).Count(&n).Error; err != nil {
		return false, convertErr("organizations.slug_taken", err, nil, nil)
	}
	return n > 0, nil
}

// Update implements ports.OrganizationRepository, with the row locked on
// PostgreSQL.
func (r *OrganizationRepository) Update(ctx context.Context, id domain.OrganizationID, fn func(o *domain.Organization) error) error {
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		o, err := getOrganization(forUpdate(tx), "id = ?", string(id))
		if err != nil {
			return err
		}
		if err := fn(o); err != nil {
			return err
		}
		row := organizationFromDomain(o)
		return tx.Model(&organizationRow{}).Where("id = ?", string(id)).Select("*").Omit("id").Updates(&row).Error
	})
	return convertErr("organizations.update", err, domain.ErrOrganizationNotFound, domain.ErrSlugTaken)
}

// Delete implements ports.OrganizationRepository. The foreign keys delete
// the members and invitations and clear the sessions' active organization.
func (r *OrganizationRepository) Delete(ctx context.Context, id domain.OrganizationID) error {
	res := conn(ctx, r.db).Where("id = ?", string(id)).Delete(&organizationRow{})
	if res.Error != nil {
		return convertErr("organizations.delete", res.Error, nil, nil)
	}
	if res.RowsAffected == 0 {
		return domain.ErrOrganizationNotFound
	}
	return nil
}

// ListByUser implements ports.OrganizationRepository, through the index on
// members.user_id.
func (r *OrganizationRepository) ListByUser(ctx context.Context, userID domain.UserID) ([]*domain.Organization, error) {
	var rows []organizationRow
	err := conn(ctx, r.db).Table("organizations o").Select("o.*").
		Joins("JOIN members m ON m.organization_id = o.id").
		Where("m.user_id = ?", string(userID)).
		Order("m.created_at ASC, m.id ASC").
		Find(&rows).Error
	if err != nil {
		return nil, convertErr("organizations.list_by_user", err, nil, nil)
	}
	out := make([]*domain.Organization, 0, len(rows))
	for _, row := range rows {
		out = append(out, row.toDomain())
	}
	return out, nil
}

// List implements ports.OrganizationRepository: one query read in order,
// backwards, from organizations_created_at_idx, from the cursor's position
// when there is one (a row-value comparison that both dialects turn into a
// range of the index; see TestOrganizationList_uses_the_index). The member
// counts are the rows' member_count. It asks for one organization more than
// the page holds, to tell whether another page follows.
func (r *OrganizationRepository) List(ctx context.Context, q ports.OrganizationQuery) (ports.OrganizationPage, error) {
	if err := q.Validate(); err != nil {
		return ports.OrganizationPage{}, err
	}
	db := conn(ctx, r.db).Model(&organizationRow{})
	if q.After != nil {
		// The time normalised like the stored times: SQLite compares them as text.
		db = db.Where("(created_at, "+r.orgID+") < (?, ?)", domain.Timestamp(q.After.At), q.After.ID)
	}
	if q.Contains != "" {
		// Slugs are lower case (domain.CheckSlug); names are folded here.
		part := "%" + escapeLike(strings.ToLower(q.Contains)) + "%"
		db = db.Where(`(LOWER(name) LIKE ? ESCAPE '\' OR slug LIKE ? ESCAPE '\')`, part, part)
	}
	var rows []organizationRow
	if err := db.Order("created_at DESC, " + r.orgID + " DESC").Limit(q.Limit + 1).Find(&rows).Error; err != nil {
		return ports.OrganizationPage{}, convertErr("organizations.list", err, nil, nil)
	}
	out := ports.OrganizationPage{}
	if len(rows) > q.Limit {
		rows = rows[:q.Limit]
		last := rows[len(rows)-1]
		out.Next = &domain.Position{At: domain.Timestamp(last.CreatedAt), ID: last.ID}
	}
	out.Organizations = make([]ports.OrganizationWithCount, 0, len(rows))
	for _, row := range rows {
		out.Organizations = append(out.Organizations, ports.OrganizationWithCount{Organization: row.toDomain(), MemberCount: row.MemberCount})
	}
	return out, nil
}

// AddMember implements ports.OrganizationRepository, under the
// organization's lock.
func (r *OrganizationRepository) AddMember(ctx context.Context, m *domain.Member) error {
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		if err := lockOrganization(tx, m.OrganizationID()); err != nil {
			return err
		}
		return insertMember(tx, m)
	})
	return convertErr("members.add", err, nil, nil)
}

// insertMember inserts m. Its organization is known to exist, so a foreign
// key violation means the user is missing.
func insertMember(tx *gorm.DB, m *domain.Member) error {
	row := memberFromDomain(m)
	return convertErr("members.insert", tx.Create(&row).Error, domain.ErrUserNotFound, domain.ErrAlreadyMember)
}

// GetMember implements ports.OrganizationRepository.
func (r *OrganizationRepository) GetMember(ctx context.Context, org domain.OrganizationID, id domain.MemberID) (*domain.Member, error) {
	return getMember(conn(ctx, r.db), "id = ? AND organization_id = ?", string(id), string(org))
}

// GetMemberByUser implements ports.OrganizationRepository, through the
// unique index on (organization_id, user_id).
func (r *OrganizationRepository) GetMemberByUser(ctx context.Context, org domain.OrganizationID, userID domain.UserID) (*domain.Member, error) {
	return getMember(conn(ctx, r.db), "organization_id = ? AND user_id = ?", string(org), string(userID))
}

func getMember(db *gorm.DB, where string, args ...any) (*domain.Member, error) {
	var row memberRow
	if err := db.Where(where, args...).Take(&row).Error; err != nil {
		return nil, convertErr("members.get", err, domain.ErrMemberNotFound, nil)
	}
	return row.toDomain(), nil
}

// ListMembers implements ports.OrganizationRepository: the total is the
// organization's member_count, read by primary key; the page is one query
// joining members and users, read in order from the index on
// (organization_id, created_at, id), from the cursor's position when there is
// one. It asks for one member more than the page holds, to tell whether
// another page follows.
func (r *OrganizationRepository) ListMembers(ctx context.Context, org domain.OrganizationID, q ports.MemberQuery) (ports.MemberPage, error) {
	if err := q.Validate(); err != nil {
		return ports.MemberPage{}, err
	}
	db := conn(ctx, r.db)
	total, err := memberCount(db, org)
	if err != nil {
		return ports.MemberPage{}, err
	}
	out := ports.MemberPage{Members: []ports.MemberWithUser{}, Total: total}
	if total == 0 || q.Offset >= total {
		return out, nil
	}
	stmts := r.memberPageSQL[0]
	if q.SortDesc {
		stmts = r.memberPageSQL[1]
	}
	query, args := stmts[0], []any{string(org), q.Limit + 1, q.Offset}
	if q.After != nil {
		// The time normalised like the stored times: SQLite compares them as text.
		query, args = stmts[1], []any{string(org), domain.Timestamp(q.After.CreatedAt), string(q.After.ID), q.Limit + 1}
	}
	var rows []memberUserRow
	if err := db.Raw(query, args...).Scan(&rows).Error; err != nil {
		return ports.MemberPage{}, convertErr("members.list", err, nil, nil)
	}
	if len(rows) > q.Limit {
		rows = rows[:q.Limit]
		last := rows[len(rows)-1].Member
		out.Next = &ports.MemberCursor{CreatedAt: last.CreatedAt, ID: domain.MemberID(last.ID)}
	}
	out.Members = make([]ports.MemberWithUser, 0, len(rows))
	for _, row := range rows {
		out.Members = append(out.Members, ports.MemberWithUser{Member: row.Member.toDomain(), User: row.User.toDomain()})
	}
	return out, nil
}

// memberCount returns org's member_count, or 0 when org is missing.
func memberCount(db *gorm.DB, org domain.OrganizationID) (int, error) {
	var row organizationRow
	err := db.Select("member_count").Where("id = ?", string(org)).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, convertErr("members.count", err, nil, nil)
	}
	return row.MemberCount, nil
}

// UpdateMember implements ports.OrganizationRepository, under the
// organization's lock.
func (r *OrganizationRepository) UpdateMember(ctx context.Context, org domain.OrganizationID, id domain.MemberID, fn func(m *domain.Member) error) error {
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		if err := lockOrganization(tx, org); err != nil {
			return err
		}
		m, err := getMember(tx, "id = ? AND organization_id = ?", string(id), string(org))
		if err != nil {
			return err
		}
		wasOwner := m.IsOwner()
		if err := fn(m); err != nil {
			return err
		}
		if wasOwner && !m.IsOwner() {
			if err := checkOtherOwner(tx, org, id); err != nil {
				return err
			}
		}
		return tx.Model(&memberRow{}).Where("id = ?", string(id)).Update("role", domain.JoinOrgRoles(m.Roles())).Error
	})
	return convertErr("members.update", err, domain.ErrMemberNotFound, nil)
}

// RemoveMember implements ports.OrganizationRepository, under the
// organization's lock.
func (r *OrganizationRepository) RemoveMember(ctx context.Context, org domain.OrganizationID, id domain.MemberID) (*domain.Member, error) {
	var removed *domain.Member
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		if err := lockOrganization(tx, org); err != nil {
			return err
		}
		m, err := getMember(tx, "id = ? AND organization_id = ?", string(id), string(org))
		if err != nil {
			return err
		}
		if m.IsOwner() {
			if err := checkOtherOwner(tx, org, id); err != nil {
				return err
			}
		}
		if err := tx.Where("id = ?", string(id)).Delete(&memberRow{}).Error; err != nil {
			return err
		}
		removed = m
		return nil
	})
	if err != nil {
		return nil, convertErr("members.remove", err, domain.ErrMemberNotFound, nil)
	}
	return removed, nil
}

// checkOtherOwner returns ErrLastOwner unless a member of org other than
// except holds the owner role. The caller holds the organization's lock.
func checkOtherOwner(tx *gorm.DB, org domain.OrganizationID, except domain.MemberID) error {
	var n int64
	err := tx.Model(&memberRow{}).
		Where("organization_id = ? AND id <> ? AND (',' || role || ',') LIKE ?", string(org), string(except), ownerRolePattern).
		Count(&n).Error
	if err != nil {
		return err
	}
	if n == 0 {
		return domain.ErrLastOwner
	}
	return nil
}

// CountMembers implements ports.OrganizationRepository: the organization's
// member_count, read by primary key.
func (r *OrganizationRepository) CountMembers(ctx context.Context, org domain.OrganizationID) (int, error) {
	return memberCount(conn(ctx, r.db), org)
}

// CreateInvitation implements ports.OrganizationRepository. The
// organization is looked up first, so that a foreign-key violation on the
// insert can only mean the inviter is missing.
func (r *OrganizationRepository) CreateInvitation(ctx context.Context, inv *domain.Invitation) error {
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		if _, err := getOrganization(tx.Select("id"), "id = ?", string(inv.OrganizationID())); err != nil {
			return err
		}
		row := invitationFromDomain(inv)
		return convertErr("invitations.create", tx.Create(&row).Error, domain.ErrUserNotFound, domain.ErrInvitationExists)
	})
	return convertErr("invitations.create", err, nil, nil)
}

// GetInvitation implements ports.OrganizationRepository.
func (r *OrganizationRepository) GetInvitation(ctx context.Context, id domain.InvitationID) (*domain.Invitation, error) {
	return getInvitation(conn(ctx, r.db), id)
}

func getInvitation(db *gorm.DB, id domain.InvitationID) (*domain.Invitation, error) {
	var row invitationRow
	if err := db.Where("id = ?", string(id)).Take(&row).Error; err != nil {
		return nil, convertErr("invitations.get", err, domain.ErrInvitationNotFound, nil)
	}
	return row.toDomain(), nil
}

// saveInvitation writes inv over its row.
func saveInvitation(tx *gorm.DB, inv *domain.Invitation) error {
	row := invitationFromDomain(inv)
	return tx.Model(&invitationRow{}).Where("id = ?", row.ID).Select("*").Omit("id").Updates(&row).Error
}

// UpdateInvitation implements ports.OrganizationRepository, with the row
// locked on PostgreSQL.
func (r *OrganizationRepository) UpdateInvitation(ctx context.Context, id domain.InvitationID, fn func(inv *domain.Invitation) error) error {
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		inv, err := getInvitation(forUpdate(tx), id)
		if err != nil {
			return err
		}
		if err := fn(inv); err != nil {
			return err
		}
		return saveInvitation(tx, inv)
	})
	return convertErr("invitations.update", err, domain.ErrInvitationNotFound, nil)
}

// AcceptInvitation implements ports.OrganizationRepository. The
// organization is locked before the invitation, the order in which deleting
// the organization takes them, so the two cannot deadlock.
func (r *OrganizationRepository) AcceptInvitation(ctx context.Context, id domain.InvitationID, fn func(inv *domain.Invitation) error, m *domain.Member) error {
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		inv, err := getInvitation(tx, id)
		if err != nil {
			return err
		}
		if m.OrganizationID() != inv.OrganizationID() {
			return domain.Internal("gormstore: invitations.accept", errMemberOfAnotherOrg)
		}
		if err := lockOrganization(tx, inv.OrganizationID()); err != nil {
			return err
		}
		// Read again under the lock: the first read chose what to lock.
		if inv, err = getInvitation(forUpdate(tx), id); err != nil {
			return err
		}
		if err := fn(inv); err != nil {
			return err
		}
		if err := saveInvitation(tx, inv); err != nil {
			return err
		}
		return insertMember(tx, m)
	})
	return convertErr("invitations.accept", err, domain.ErrInvitationNotFound, nil)
}

// ListInvitations implements ports.OrganizationRepository.
func (r *OrganizationRepository) ListInvitations(ctx context.Context, org domain.OrganizationID) ([]*domain.Invitation, error) {
	return listInvitations(conn(ctx, r.db).Where("organization_id = ?", string(org)))
}

// ListPendingInvitationsByEmail implements ports.OrganizationRepository,
// through the index on (email, status). now is normalised like the stored
// times: SQLite compares them as text.
func (r *OrganizationRepository) ListPendingInvitationsByEmail(ctx context.Context, email domain.Email, now time.Time) ([]*domain.Invitation, error) {
	return listInvitations(pending(conn(ctx, r.db), now).Where("email = ?", string(email)))
}

// FindPendingInvitation implements ports.OrganizationRepository.
func (r *OrganizationRepository) FindPendingInvitation(ctx context.Context, org domain.OrganizationID, email domain.Email, now time.Time) (*domain.Invitation, error) {
	var row invitationRow
	err := pending(conn(ctx, r.db), now).
		Where("email = ? AND organization_id = ?", string(email), string(org)).
		Order("created_at DESC, id DESC").Take(&row).Error
	if err != nil {
		return nil, convertErr("invitations.find_pending", err, domain.ErrInvitationNotFound, nil)
	}
	return row.toDomain(), nil
}

// CountPendingInvitations implements ports.OrganizationRepository.
func (r *OrganizationRepository) CountPendingInvitations(ctx context.Context, org domain.OrganizationID, now time.Time) (int, error) {
	var n int64
	err := pending(conn(ctx, r.db).Model(&invitationRow{}), now).Where("organization_id = ?", string(org)).Count(&n).Error
	if err != nil {
		return 0, convertErr("invitations.count_pending", err, nil, nil)
	}
	return int(n), nil
}

// pending narrows q to the invitations open at now.
func pending(q *gorm.DB, now time.Time) *gorm.DB {
	return q.Where("status = ? AND expires_at > ?", string(domain.InvitationPending), domain.Timestamp(now))
}

// listInvitations returns what q selects, newest first, ties broken by id.
func listInvitations(q *gorm.DB) ([]*domain.Invitation, error) {
	var rows []invitationRow
	if err := q.Order("created_at DESC, id DESC").Find(&rows).Error; err != nil {
		return nil, convertErr("invitations.list", err, nil, nil)
	}
	out := make([]*domain.Invitation, 0, len(rows))
	for _, row := range rows {
		out = append(out, row.toDomain())
	}
	return out, nil
}
