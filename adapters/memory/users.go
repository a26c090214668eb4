package memory

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.UserRepository = (*UserRepository)(nil)

// UserRepository keeps users in the shared DB.
type UserRepository struct {
	db *DB
}

// NewUserRepository returns a UserRepository on db.
func NewUserRepository(db *DB) *UserRepository {
	if db == nil {
		panic("memory: nil db")
	}
	return &UserRepository{db: db}
}

// copyUser returns an independent copy, so neither the caller nor the store
// can change the other's value: rebuilt, so that it shares no slice (the
// roles) with u.
func copyUser(u *domain.User) *domain.User {
	return domain.RehydrateUser(u.ID(), u.Name(), u.Email(), u.EmailVerified(), u.Image(), u.Access(), u.Metadata(), u.CreatedAt(), u.UpdatedAt()).
		WithTwoFactor(u.TwoFactorEnabled())
}

// Create implements ports.UserRepository.
func (r *UserRepository) Create(ctx context.Context, u *domain.User) error {
	defer r.db.unlock(r.db.lock(ctx))
	return r.db.createUser(u)
}

// createUser stores a copy of u. The caller holds the write lock.
func (db *DB) createUser(u *domain.User) error {
	if _, ok := db.users[u.ID()]; ok {
		return domain.ErrUserExists
	}
	if _, ok := db.userByEmail[u.Email()]; ok {
		return domain.ErrUserExists
	}
	set(db, db.users, u.ID(), copyUser(u))
	set(db, db.userByEmail, u.Email(), u.ID())
	return nil
}

// Get implements ports.UserRepository.
func (r *UserRepository) Get(ctx context.Context, id domain.UserID) (*domain.User, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	u, ok := r.db.users[id]
	if !ok {
		return nil, domain.ErrUserNotFound
	}
	return copyUser(u), nil
}

// GetByEmail implements ports.UserRepository.
func (r *UserRepository) GetByEmail(ctx context.Context, email domain.Email) (*domain.User, error) {
	defer r.db.runlock(r.db.rlock(ctx))
	id, ok := r.db.userByEmail[email]
	if !ok {
		return nil, domain.ErrUserNotFound
	}
	return copyUser(r.db.users[id]), nil
}

// Update implements ports.UserRepository. It holds the write lock while fn
// runs, which is what makes concurrent updates serialise.
func (r *UserRepository) Update(ctx context.Context, id domain.UserID, fn func(u *domain.User) error) error {
	defer r.db.unlock(r.db.lock(ctx))
	stored, ok := r.db.users[id]
	if !ok {
		return domain.ErrUserNotFound
	}
	u := copyUser(stored)
	if err := fn(u); err != nil {
		return err
	}
	if u.Email() != stored.Email() {
		if _, taken := r.db.userByEmail[u.Email()]; taken {
			return domain.ErrUserExists
		}
		unset(r.db, r.db.userByEmail, stored.Email())
		set(r.db, r.db.userByEmail, u.Email(), id)
	}
	set(r.db, r.db.users, id, u)
	return nil
}

// Delete implements ports.UserRepository. The user's sessions, credential and
// links go with them.
func (r *UserRepository) Delete(ctx context.Context, id domain.UserID) error {
	defer r.db.unlock(r.db.lock(ctx))
	u, ok := r.db.users[id]
	if !ok {
		return domain.ErrUserNotFound
	}
	r.db.deleteUser(u)
	return nil
}

// List implements ports.UserRepository. It scans every user, as the SQL
// stores do for any sort but the default; text compares byte by byte, and
// the case-insensitive operators fold case with strings.ToLower.
func (r *UserRepository) List(ctx context.Context, q ports.UserQuery) ([]*domain.User, int, error) {
	matchers := make([]func(*domain.User) bool, 0, len(q.Conditions))
	for _, c := range q.Conditions {
		m, err := userMatcher(c)
		if err != nil {
			return nil, 0, err
		}
		matchers = append(matchers, m)
	}
	sortKey, err := userSortKey(q.SortBy)
	if err != nil {
		return nil, 0, err
	}
	if err := q.ValidatePage(); err != nil {
		return nil, 0, err
	}

	defer r.db.runlock(r.db.rlock(ctx))
	var matches []*domain.User
	for _, u := range r.db.users {
		if !slices.ContainsFunc(matchers, func(m func(*domain.User) bool) bool { return !m(u) }) {
			matches = append(matches, u)
		}
	}
	slices.SortFunc(matches, func(a, b *domain.User) int {
		c := sortKey(a, b)
		if c == 0 {
			c = strings.Compare(string(a.ID()), string(b.ID()))
		}
		if q.SortDesc {
			return -c
		}
		return c
	})
	total := len(matches)
	page := matches[min(q.Offset, total):min(q.Offset+q.Limit, total)]
	out := make([]*domain.User, 0, len(page))
	for _, u := range page {
		out = append(out, copyUser(u))
	}
	return out, total, nil
}

// Page implements ports.UserRepository. It scans every user, where the SQL
// stores read an index; text compares byte by byte, and the contains
// filters fold case with strings.ToLower.
func (r *UserRepository) Page(ctx context.Context, q ports.UserPageQuery) (ports.UserPage, error) {
	if err := q.Validate(); err != nil {
		return ports.UserPage{}, err
	}
	emailPart, namePart := strings.ToLower(q.EmailContains), strings.ToLower(q.NameContains)
	after, before := domain.Timestamp(q.CreatedAfter), domain.Timestamp(q.CreatedBefore)
	defer r.db.runlock(r.db.rlock(ctx))
	var matches []*domain.User
	for _, u := range r.db.users {
		switch {
		case q.Email != "" && u.Email() != q.Email,
			emailPart != "" && !strings.Contains(strings.ToLower(string(u.Email())), emailPart),
			namePart != "" && !strings.Contains(strings.ToLower(u.Name()), namePart),
			q.Banned != nil && u.Access().Banned != *q.Banned,
			q.EmailVerified != nil && u.EmailVerified() != *q.EmailVerified,
			!q.CreatedAfter.IsZero() && !u.CreatedAt().After(after),
			!q.CreatedBefore.IsZero() && !u.CreatedAt().Before(before),
			q.After != nil && newestFirst(u, *q.After) <= 0:
			continue
		}
		if q.OrganizationID != "" {
			if _, ok := r.db.memberByOrgUser[orgUser{org: q.OrganizationID, user: u.ID()}]; !ok {
				continue
			}
		}
		matches = append(matches, u)
	}
	slices.SortFunc(matches, func(a, b *domain.User) int {
		return newestFirst(a, domain.Position{At: b.CreatedAt(), ID: string(b.ID())})
	})
	var out ports.UserPage
	if len(matches) > q.Limit {
		matches = matches[:q.Limit]
		last := matches[len(matches)-1]
		out.Next = &domain.Position{At: last.CreatedAt(), ID: string(last.ID())}
	}
	out.Users = make([]*domain.User, 0, len(matches))
	out.Passkeys = make([]int, len(matches))
	at := make(map[domain.UserID]int, len(matches))
	for i, u := range matches {
		out.Users = append(out.Users, copyUser(u))
		at[u.ID()] = i
	}
	for _, c := range r.db.passkeys {
		if i, ok := at[c.UserID]; ok {
			out.Passkeys[i]++
		}
	}
	return out, nil
}

// newestFirst compares u with the position p in the newest-first order:
// negative when u comes before p (is newer), positive when after.
func newestFirst(u *domain.User, p domain.Position) int {
	if c := p.At.Compare(u.CreatedAt()); c != 0 {
		return c
	}
	return strings.Compare(p.ID, string(u.ID()))
}

// userSortKey returns the comparison of the field users are sorted by.
func userSortKey(f ports.UserField) (func(a, b *domain.User) int, error) {
	switch f {
	case "", ports.UserFieldCreatedAt:
		return func(a, b *domain.User) int { return a.CreatedAt().Compare(b.CreatedAt()) }, nil
	case ports.UserFieldUpdatedAt:
		return func(a, b *domain.User) int { return a.UpdatedAt().Compare(b.UpdatedAt()) }, nil
	case ports.UserFieldEmail:
		return func(a, b *domain.User) int { return strings.Compare(string(a.Email()), string(b.Email())) }, nil
	case ports.UserFieldName:
		return func(a, b *domain.User) int { return strings.Compare(a.Name(), b.Name()) }, nil
	}
	return nil, ports.UserQueryError("cannot sort by %q", f)
}

// userMatcher returns the test of one condition, with the semantics of the
// SQL stores.
func userMatcher(c ports.UserCondition) (func(*domain.User) bool, error) {
	switch c.Field {
	case ports.UserFieldEmail, ports.UserFieldName, ports.UserFieldID:
		v, ok := c.Value.(string)
		if !ok {
			break
		}
		get := map[ports.UserField]func(*domain.User) string{
			ports.UserFieldEmail: func(u *domain.User) string { return string(u.Email()) },
			ports.UserFieldName:  (*domain.User).Name,
			ports.UserFieldID:    func(u *domain.User) string { return string(u.ID()) },
		}[c.Field]
		if test, ok := compareTest(c.Operator); ok {
			return func(u *domain.User) bool { return test(strings.Compare(get(u), v)) }, nil
		}
		var textTest func(s, sub string) bool
		switch c.Operator {
		case ports.OpContains:
			textTest = strings.Contains
		case ports.OpStartsWith:
			textTest = strings.HasPrefix
		case ports.OpEndsWith:
			textTest = strings.HasSuffix
		default:
			return nil, ports.UserQueryError("operator %q on field %q", c.Operator, c.Field)
		}
		lower := strings.ToLower(v)
		return func(u *domain.User) bool { return textTest(strings.ToLower(get(u)), lower) }, nil
	case ports.UserFieldRole:
		v, ok := c.Value.(string)
		if !ok || strings.Contains(v, ",") || (c.Operator != ports.OpEq && c.Operator != ports.OpNe) {
			break
		}
		want := c.Operator == ports.OpEq
		return func(u *domain.User) bool { return slices.Contains(u.Roles(), domain.PlatformRole(v)) == want }, nil
	case ports.UserFieldBanned, ports.UserFieldVerified:
		v, ok := c.Value.(bool)
		if !ok || (c.Operator != ports.OpEq && c.Operator != ports.OpNe) {
			break
		}
		want := c.Operator == ports.OpEq
		if c.Field == ports.UserFieldBanned {
			return func(u *domain.User) bool { return (u.Access().Banned == v) == want }, nil
		}
		return func(u *domain.User) bool { return (u.EmailVerified() == v) == want }, nil
	case ports.UserFieldCreatedAt, ports.UserFieldUpdatedAt:
		v, ok := c.Value.(time.Time)
		test, known := compareTest(c.Operator)
		if !ok || !known {
			break
		}
		v = domain.Timestamp(v)
		if c.Field == ports.UserFieldCreatedAt {
			return func(u *domain.User) bool { return test(u.CreatedAt().Compare(v)) }, nil
		}
		return func(u *domain.User) bool { return test(u.UpdatedAt().Compare(v)) }, nil
	}
	return nil, ports.UserQueryError("operator %q on field %q with a %T value", c.Operator, c.Field, c.Value)
}

// compareTest returns what an ordering operator requires of a comparison's
// result (-1, 0 or 1), and false for the other operators.
func compareTest(op ports.Operator) (func(c int) bool, bool) {
	switch op {
	case ports.OpEq:
		return func(c int) bool { return c == 0 }, true
	case ports.OpNe:
		return func(c int) bool { return c != 0 }, true
	case ports.OpLt:
		return func(c int) bool { return c < 0 }, true
	case ports.OpLte:
		return func(c int) bool { return c <= 0 }, true
	case ports.OpGt:
		return func(c int) bool { return c > 0 }, true
	case ports.OpGte:
		return func(c int) bool { return c >= 0 }, true
	}
	return nil, false
}
