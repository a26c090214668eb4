package command

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// BackendUsers is the trusted API's user use cases: a consumer's backend,
// authenticated by its service key, manages any user. The rules are those
// of platform administration (the password policy, bans that end sessions,
// deletion taking sessions and memberships along), from the same code; the
// key's scope was checked at the edge, and the errors carry the trusted
// API's area.reason codes. Every write is audited with the key as the actor.
type BackendUsers struct {
	a *Administration
}

// NewBackendUsers returns the trusted user use cases, on platform
// administration's dependencies and settings.
func NewBackendUsers(a *Administration) *BackendUsers {
	if a == nil {
		panic("command: nil dependency")
	}
	return &BackendUsers{a: a}
}

// The trusted API's user errors.
var (
	errBackendUserNotFound = domain.NotFound("user.not_found", "User")
	errBackendEmailTaken   = &domain.Error{Kind: domain.KindConflict, Code: "user.email_taken", Message: "Another user has this e-mail address",
		Fields: []domain.FieldViolation{{Field: "email", Message: "is taken by another user"}}}
	errBackendNoChanges = domain.Invalid("user.no_changes", "Nothing to change",
		domain.FieldViolation{Field: "", Message: "must name at least one field to change"})
	errBackendUserEmailFilter = domain.Invalid("request.invalid_email", "Invalid email",
		domain.FieldViolation{Field: "email", Message: "must be a valid e-mail address"})
)

// backendUserErr gives an error of the shared use cases its trusted code.
func backendUserErr(err error) error {
	var de *domain.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &de) && de.Code == errNoDataToUpdate.Code:
		return errBackendNoChanges
	case errors.Is(err, domain.ErrNotFound):
		return errBackendUserNotFound
	case errors.Is(err, domain.ErrConflict):
		return errBackendEmailTaken
	}
	return err
}

// relocated returns err with the field violations at from moved to to: the
// shared rules name the admin plugin's fields.
func relocated(err error, from, to string) error {
	var de *domain.Error
	if !errors.As(err, &de) || len(de.Fields) == 0 {
		return err
	}
	out := *de
	out.Fields = make([]domain.FieldViolation, len(de.Fields))
	for i, f := range de.Fields {
		if f.Field == from {
			f.Field = to
		}
		out.Fields[i] = f
	}
	return &out
}

// record audits action on the user id with the key as actor, after giving
// err its trusted code, and returns that error.
func (b *BackendUsers) record(ctx context.Context, req TrustedRequest, action string, id domain.UserID, err error) error {
	return b.a.audit.record(ctx, req.Actor(), action, userTarget(id), backendUserErr(err))
}

// parseMetadata parses one optional metadata object of a request.
func parseMetadata(raw []byte, location string) (*domain.Metadata, error) {
	if raw == nil {
		return nil, nil
	}
	m, err := domain.NewMetadata(location, raw)
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// CreateBackendUser is a trusted backend creating a user.
type CreateBackendUser struct {
	Email string
	Name  string
	// Password is optional: without it the user signs in after a reset
	// (or through another method).
	Password      string
	EmailVerified bool
	Image         string
	// PublicMetadata and PrivateMetadata are JSON objects; nil means {}.
	PublicMetadata  []byte
	PrivateMetadata []byte
}

// Create creates a user, with a credential when a password is given (the
// password policy applies). A taken address is user.email_taken.
func (b *BackendUsers) Create(ctx context.Context, req TrustedRequest, cmd CreateBackendUser) (*domain.User, error) {
	created, err := func() (*domain.User, error) {
		cu := CreateUser{Email: cmd.Email, Name: cmd.Name, Password: cmd.Password, EmailVerified: cmd.EmailVerified, Image: cmd.Image}
		public, err := parseMetadata(cmd.PublicMetadata, "publicMetadata")
		if err != nil {
			return nil, err
		}
		private, err := parseMetadata(cmd.PrivateMetadata, "privateMetadata")
		if err != nil {
			return nil, err
		}
		if public != nil {
			cu.Metadata.Public = *public
		}
		if private != nil {
			cu.Metadata.Private = *private
		}
		return b.a.newUser(ctx, cu)
	}()
	var id domain.UserID
	if created != nil {
		id = created.ID()
	}
	if err := b.record(ctx, req, "users.create", id, err); err != nil {
		return nil, err
	}
	return created, nil
}

// Get returns the user id, or user.not_found.
func (b *BackendUsers) Get(ctx context.Context, _ TrustedRequest, id domain.UserID) (*domain.User, error) {
	u, err := b.a.users.Get(ctx, id)
	return u, backendUserErr(err)
}

// ListBackendUsers asks for one page of users, newest first: Limit users (1
// to 100; 0 means 20) after the cursor of the page before ("" for the
// first), matching every filter given.
type ListBackendUsers struct {
	Limit  int
	Cursor string
	// Email is an exact address, compared after normalisation, so in any case.
	Email          string
	EmailContains  string
	NameContains   string
	Banned         *bool
	OrganizationID domain.OrganizationID
	CreatedAfter   time.Time
	CreatedBefore  time.Time
}

// BackendUserPage is one page of users and the cursor of the next ("" on
// the last page).
type BackendUserPage struct {
	Users      []*domain.User
	NextCursor string
}

// DefaultBackendUserLimit is the page size of a listing that names none.
const DefaultBackendUserLimit = 20

// List returns one page of the users matching q.
func (b *BackendUsers) List(ctx context.Context, _ TrustedRequest, q ListBackendUsers) (BackendUserPage, error) {
	if q.Limit == 0 {
		q.Limit = DefaultBackendUserLimit
	}
	after, err := pageRequest(q.Limit, q.Cursor)
	if err != nil {
		return BackendUserPage{}, err
	}
	pq := ports.UserPageQuery{Limit: q.Limit, After: after, EmailContains: q.EmailContains, NameContains: q.NameContains, Banned: q.Banned,
		OrganizationID: q.OrganizationID, CreatedAfter: q.CreatedAfter, CreatedBefore: q.CreatedBefore}
	if q.Email != "" {
		email, err := domain.NewEmail(q.Email)
		if err != nil {
			return BackendUserPage{}, errBackendUserEmailFilter
		}
		pq.Email = email
	}
	page, err := b.a.users.Page(ctx, pq)
	if err != nil {
		return BackendUserPage{}, err
	}
	out := BackendUserPage{Users: page.Users}
	out.NextCursor = nextCursor(page.Next)
	return out, nil
}

// BackendUserPatch is what a trusted backend may change on a user; nil
// fields stay as they are. Roles, bans and passwords have their own use
// cases (or none: platform roles are for administrators).
type BackendUserPatch struct {
	Name          *string
	Email         *string
	EmailVerified *bool
	Image         *string
	// PublicMetadata and PrivateMetadata replace the whole object when not nil.
	PublicMetadata  []byte
	PrivateMetadata []byte
}

// Update changes a user. A new address is unverified unless the patch
// verifies it; one taken by another user is user.email_taken.
func (b *BackendUsers) Update(ctx context.Context, req TrustedRequest, id domain.UserID, p BackendUserPatch) (*domain.User, error) {
	updated, err := func() (*domain.User, error) {
		patch := AdminUserPatch{Name: p.Name, Email: p.Email, EmailVerified: p.EmailVerified, Image: p.Image}
		var err error
		if patch.PublicMetadata, err = parseMetadata(p.PublicMetadata, "publicMetadata"); err != nil {
			return nil, err
		}
		if patch.PrivateMetadata, err = parseMetadata(p.PrivateMetadata, "privateMetadata"); err != nil {
			return nil, err
		}
		return b.a.updateUser(ctx, id, patch)
	}()
	if err := b.record(ctx, req, "users.update", id, err); err != nil {
		return nil, err
	}
	return updated, nil
}

// Delete deletes a user; their sessions, credential, links and memberships
// go with them.
func (b *BackendUsers) Delete(ctx context.Context, req TrustedRequest, id domain.UserID) error {
	return b.record(ctx, req, "users.delete", id, b.a.users.Delete(ctx, id))
}

// Ban bans a user for reason (may be empty) until expiresIn from now (zero:
// until unbanned) and ends all their sessions.
func (b *BackendUsers) Ban(ctx context.Context, req TrustedRequest, id domain.UserID, reason string, expiresIn time.Duration) (*domain.User, error) {
	u, err := b.a.banUser(ctx, id, reason, expiresIn)
	err = relocated(relocated(err, "banReason", "reason"), "banExpiresIn", "expiresInSeconds")
	if err := b.record(ctx, req, "users.ban", id, err); err != nil {
		return nil, err
	}
	return u, nil
}

// Unban lifts a user's ban.
func (b *BackendUsers) Unban(ctx context.Context, req TrustedRequest, id domain.UserID) (*domain.User, error) {
	u, err := b.a.unbanUser(ctx, id)
	if err := b.record(ctx, req, "users.unban", id, err); err != nil {
		return nil, err
	}
	return u, nil
}

// RevokeSessions ends all of a user's sessions.
func (b *BackendUsers) RevokeSessions(ctx context.Context, req TrustedRequest, id domain.UserID) error {
	return b.record(ctx, req, "users.revoke-sessions", id, b.a.revokeUserSessions(ctx, id))
}

// SetPassword sets a user's password under the password policy, creating
// their credential if they had none, and ends their sessions.
func (b *BackendUsers) SetPassword(ctx context.Context, req TrustedRequest, id domain.UserID, password string) error {
	return b.record(ctx, req, "users.set-password", id, b.a.setUserPassword(ctx, id, password, "password"))
}
