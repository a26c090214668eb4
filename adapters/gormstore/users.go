package gormstore

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.UserRepository = (*UserRepository)(nil)

// UserRepository stores users in the users table.
type UserRepository struct {
	db *gorm.DB
}

// NewUserRepository returns a UserRepository on db.
func NewUserRepository(db *gorm.DB) *UserRepository {
	if db == nil {
		panic("gormstore: nil db")
	}
	return &UserRepository{db: db}
}

// Create implements ports.UserRepository.
func (r *UserRepository) Create(ctx context.Context, u *domain.User) error {
	row := userFromDomain(u)
	return convertErr("users.create", conn(ctx, r.db).Create(&row).Error, nil, domain.ErrUserExists)
}

// Get implements ports.UserRepository.
func (r *UserRepository) Get(ctx context.Context, id domain.UserID) (*domain.User, error) {
	return getUser(conn(ctx, r.db), "id = ?", string(id))
}

// GetByEmail implements ports.UserRepository.
func (r *UserRepository) GetByEmail(ctx context.Context, email domain.Email) (*domain.User, error) {
	return getUser(conn(ctx, r.db), "email = ?", string(email))
}

func getUser(db *gorm.DB, where string, arg string) (*domain.User, error) {
	var row userRow
	if err := db.Where(where, arg).Take(&row).Error; err != nil {
		return nil, convertErr("users.get", err, domain.ErrUserNotFound, nil)
	}
	return row.toDomain(), nil
}

// Update implements ports.UserRepository. On PostgreSQL the row is locked
// with SELECT … FOR UPDATE; on SQLite the immediate transaction already holds
// the database's write lock.
func (r *UserRepository) Update(ctx context.Context, id domain.UserID, fn func(u *domain.User) error) error {
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		q := tx
		if DialectOf(tx) == DialectPostgres {
			q = tx.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
		}
		u, err := getUser(q, "id = ?", string(id))
		if err != nil {
			return err
		}
		if err := fn(u); err != nil {
			return err
		}
		row := userFromDomain(u)
		return tx.Model(&userRow{}).Where("id = ?", row.ID).Select("*").Updates(&row).Error
	})
	return convertErr("users.update", err, domain.ErrUserNotFound, domain.ErrUserExists)
}

// Delete implements ports.UserRepository. The foreign keys delete the
// user's memberships, and the trigger on members then updates the
// member_count of each of their organizations. On PostgreSQL those
// organizations are locked first, in id order: every other change to an
// organization's members locks the organization before it touches a member
// or user row, and locking it only after the user's row could deadlock with
// one of them (say a RemoveMember of this very user, which holds the
// organization and waits for the member row this deletion holds).
func (r *UserRepository) Delete(ctx context.Context, id domain.UserID) error {
	err := transaction(ctx, r.db, func(tx *gorm.DB) error {
		if DialectOf(tx) == DialectPostgres {
			var locked []string
			err := tx.Raw(`SELECT id FROM organizations WHERE id IN (SELECT organization_id FROM members WHERE user_id = ?)
ORDER BY id FOR NO KEY UPDATE`, string(id)).Scan(&locked).Error
			if err != nil {
				return err
			}
		}
		res := tx.Where("id = ?", string(id)).Delete(&userRow{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return domain.ErrUserNotFound
		}
		return nil
	})
	return convertErr("users.delete", err, nil, nil)
}

// List implements ports.UserRepository. The matches are counted by a
// second query with the same conditions. On PostgreSQL, text is compared and
// sorted in the "C" collation, byte by byte, as SQLite and the memory store
// do whatever the database's locale; the default order (created_at, id) reads
// through users_created_at_idx.
func (r *UserRepository) List(ctx context.Context, q ports.UserQuery) ([]*domain.User, int, error) {
	db := conn(ctx, r.db)
	collate := ""
	if DialectOf(db) == DialectPostgres {
		collate = ` COLLATE "C"`
	}
	where, args, err := userQueryWhere(q, collate)
	if err != nil {
		return nil, 0, err
	}
	order, err := userQueryOrder(q, collate)
	if err != nil {
		return nil, 0, err
	}
	if err := q.ValidatePage(); err != nil {
		return nil, 0, err
	}
	var total int64
	if err := db.Model(&userRow{}).Where(where, args...).Count(&total).Error; err != nil {
		return nil, 0, convertErr("users.list", err, nil, nil)
	}
	var rows []userRow
	if err := db.Where(where, args...).Order(order).Limit(q.Limit).Offset(q.Offset).Find(&rows).Error; err != nil {
		return nil, 0, convertErr("users.list", err, nil, nil)
	}
	out := make([]*domain.User, 0, len(rows))
	for _, row := range rows {
		out = append(out, row.toDomain())
	}
	return out, int(total), nil
}

// Page implements ports.UserRepository. The page is read in the order of
// users_created_at_idx, backwards, from the cursor's position: a row-value
// comparison that both dialects turn into a range of that index, so no page
// sorts or skips the users before it. On PostgreSQL the id is compared in
// the "C" collation, byte by byte, as the index holds it and as SQLite and
// the memory store compare. An e-mail lookup reads through users_email_key.
// One user more than the limit is read to learn whether a next page exists.
func (r *UserRepository) Page(ctx context.Context, q ports.UserPageQuery) (ports.UserPage, error) {
	if err := q.Validate(); err != nil {
		return ports.UserPage{}, err
	}
	db := conn(ctx, r.db)
	query, args := userPageSQL(q, DialectOf(db))
	var rows []userPageRow
	if err := db.Raw(query, args...).Scan(&rows).Error; err != nil {
		return ports.UserPage{}, convertErr("users.page", err, nil, nil)
	}
	var out ports.UserPage
	if len(rows) > q.Limit {
		rows = rows[:q.Limit]
		last := rows[len(rows)-1].User
		out.Next = &domain.Position{At: domain.Timestamp(last.CreatedAt), ID: last.ID}
	}
	out.Users = make([]*domain.User, 0, len(rows))
	out.Passkeys = make([]int, 0, len(rows))
	for _, row := range rows {
		out.Users = append(out.Users, row.User.toDomain())
		out.Passkeys = append(out.Passkeys, row.PasskeyCount)
	}
	return out, nil
}

// userPageRow is a user of a page and how many passkeys they have.
type userPageRow struct {
	// User is exported (and named) so that gorm scans into it.
	User         userRow `gorm:"embedded"`
	PasskeyCount int
}

// userPageSQL returns the statement of a page of users and its arguments.
func userPageSQL(q ports.UserPageQuery, dialect Dialect) (string, []any) {
	id := "id"
	if dialect == DialectPostgres {
		id = `id COLLATE "C"`
	}
	where := []string{"1 = 1"}
	var args []any
	add := func(cond string, arg ...any) {
		where = append(where, cond)
		args = append(args, arg...)
	}
	if q.Email != "" {
		add("email = ?", string(q.Email))
	}
	if q.EmailContains != "" {
		// Addresses are stored lower-cased (a CHECK holds it), as
		// strings.ToLower folds the text searched for.
		add(`email LIKE ? ESCAPE '\'`, "%"+escapeLike(strings.ToLower(q.EmailContains))+"%")
	}
	if q.NameContains != "" {
		add(`LOWER(name) LIKE LOWER(?) ESCAPE '\'`, "%"+escapeLike(q.NameContains)+"%")
	}
	if q.Banned != nil {
		add("banned = ?", *q.Banned)
	}
	if q.EmailVerified != nil {
		add("email_verified = ?", *q.EmailVerified)
	}
	if q.OrganizationID != "" {
		add("EXISTS (SELECT 1 FROM members m WHERE m.organization_id = ? AND m.user_id = users.id)", string(q.OrganizationID))
	}
	// Times are normalised like the stored ones: SQLite compares them as text.
	if !q.CreatedAfter.IsZero() {
		add("created_at > ?", domain.Timestamp(q.CreatedAfter))
	}
	if !q.CreatedBefore.IsZero() {
		add("created_at < ?", domain.Timestamp(q.CreatedBefore))
	}
	if q.After != nil {
		add("(created_at, "+id+") < (?, ?)", domain.Timestamp(q.After.At), q.After.ID)
	}
	args = append(args, q.Limit+1)
	// Each user's passkeys are counted in the same statement, by a
	// correlated count that reads only passkeys_user_id_created_at_idx (a
	// covering index-only range per user of the page, at most limit+1 of
	// them): the listing stays one query, and no count is stored to drift.
	return "SELECT users.*, (SELECT COUNT(*) FROM passkeys pk WHERE pk.user_id = users.id) AS passkey_count FROM users WHERE " +
		strings.Join(where, " AND ") +
		" ORDER BY created_at DESC, " + id + " DESC LIMIT ?", args
}

// userColumns maps the searchable fields to their columns.
var userColumns = map[ports.UserField]string{
	ports.UserFieldEmail: "email", ports.UserFieldName: "name", ports.UserFieldID: "id",
	ports.UserFieldRole: "role", ports.UserFieldBanned: "banned", ports.UserFieldVerified: "email_verified",
	ports.UserFieldCreatedAt: "created_at", ports.UserFieldUpdatedAt: "updated_at",
}

// userQueryOperators maps the ordering operators to SQL.
var userQueryOperators = map[ports.Operator]string{
	ports.OpEq: "=", ports.OpNe: "<>", ports.OpLt: "<", ports.OpLte: "<=", ports.OpGt: ">", ports.OpGte: ">=",
}

// userQueryWhere returns q's conditions as one SQL condition, ANDed, with
// its arguments. Text ordering comparisons carry collate.
func userQueryWhere(q ports.UserQuery, collate string) (string, []any, error) {
	parts := []string{"1 = 1"}
	var args []any
	for _, c := range q.Conditions {
		col, ok := userColumns[c.Field]
		if !ok {
			return "", nil, ports.UserQueryError("unknown field %q", c.Field)
		}
		part, arg, err := userCondition(c, col, collate)
		if err != nil {
			return "", nil, err
		}
		parts = append(parts, part)
		args = append(args, arg)
	}
	return strings.Join(parts, " AND "), args, nil
}

// userCondition returns one condition on col and its argument.
func userCondition(c ports.UserCondition, col, collate string) (string, any, error) {
	switch c.Field {
	case ports.UserFieldEmail, ports.UserFieldName, ports.UserFieldID:
		v, ok := c.Value.(string)
		if !ok {
			break
		}
		switch c.Operator {
		case ports.OpEq, ports.OpNe:
			return col + " " + userQueryOperators[c.Operator] + " ?", v, nil
		case ports.OpLt, ports.OpLte, ports.OpGt, ports.OpGte:
			return col + collate + " " + userQueryOperators[c.Operator] + " ?", v, nil
		case ports.OpContains:
			return "LOWER(" + col + `) LIKE LOWER(?) ESCAPE '\'`, "%" + escapeLike(v) + "%", nil
		case ports.OpStartsWith:
			return "LOWER(" + col + `) LIKE LOWER(?) ESCAPE '\'`, escapeLike(v) + "%", nil
		case ports.OpEndsWith:
			return "LOWER(" + col + `) LIKE LOWER(?) ESCAPE '\'`, "%" + escapeLike(v), nil
		}
	case ports.UserFieldRole:
		v, ok := c.Value.(string)
		if !ok || strings.Contains(v, ",") {
			break
		}
		// The roles are stored comma-separated: wrapped in commas, the
		// column holds ",v," exactly when v is one of them.
		match := "(',' || " + col + ` || ',') LIKE ? ESCAPE '\'`
		switch c.Operator {
		case ports.OpEq:
			return match, "%," + escapeLike(v) + ",%", nil
		case ports.OpNe:
			return "NOT " + match, "%," + escapeLike(v) + ",%", nil
		}
	case ports.UserFieldBanned, ports.UserFieldVerified:
		v, ok := c.Value.(bool)
		if ok && (c.Operator == ports.OpEq || c.Operator == ports.OpNe) {
			return col + " " + userQueryOperators[c.Operator] + " ?", v, nil
		}
	case ports.UserFieldCreatedAt, ports.UserFieldUpdatedAt:
		v, ok := c.Value.(time.Time)
		if op, known := userQueryOperators[c.Operator]; ok && known {
			// Normalised like the stored times: SQLite compares them as text.
			return col + " " + op + " ?", domain.Timestamp(v), nil
		}
	}
	return "", nil, ports.UserQueryError("operator %q on field %q with a %T value", c.Operator, c.Field, c.Value)
}

// escapeLike makes s match only itself in a LIKE pattern with ESCAPE '\'.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(s)
}

// userQueryOrder returns q's ORDER BY: the sort column, then id, both in
// the same direction.
func userQueryOrder(q ports.UserQuery, collate string) (string, error) {
	var col string
	switch q.SortBy {
	case "", ports.UserFieldCreatedAt:
		col = "created_at"
	case ports.UserFieldUpdatedAt:
		col = "updated_at"
	case ports.UserFieldEmail:
		col = "email" + collate
	case ports.UserFieldName:
		col = "name" + collate
	default:
		return "", ports.UserQueryError("cannot sort by %q", q.SortBy)
	}
	dir := " ASC"
	if q.SortDesc {
		dir = " DESC"
	}
	return col + dir + ", id" + collate + dir, nil
}
