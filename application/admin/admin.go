package admin

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// The admin plugin's error codes.
var (
	errCannotBanYourself   = domain.NewError(domain.KindInvalid, "admin.cannot_ban_self", "You cannot ban yourself")
	errCannotRemoveSelf    = domain.NewError(domain.KindInvalid, "admin.cannot_remove_self", "You cannot remove yourself")
	errCannotImpersonate   = domain.NewError(domain.KindForbidden, "admin.cannot_impersonate_admin", "You cannot impersonate admins")
	errNotImpersonating    = domain.NewError(domain.KindInvalid, "admin.not_impersonating", "You are not impersonating anyone")
	errAdminUserNotFound   = usecase.ErrAdminUserNotFound
	errAdminSessionMissing = domain.NewError(domain.KindNotFound, "admin.session_not_found", "Session not found")
	errNoDataToUpdate      = domain.NewError(domain.KindInvalid, "admin.no_data_to_update", "No data to update")
)

var (
	permCreateUser   = usecase.Perm("user", "create", domain.ScopeUsersWrite, "admin.create_user_forbidden", "You are not allowed to create users")
	permListUsers    = usecase.Perm("user", "list", domain.ScopeUsersRead, "admin.list_users_forbidden", "You are not allowed to list users")
	permGetUser      = usecase.Perm("user", "get", domain.ScopeUsersRead, "admin.get_user_forbidden", "You are not allowed to get user")
	permUpdateUser   = usecase.Perm("user", "update", domain.ScopeUsersWrite, "admin.update_user_forbidden", "You are not allowed to update users")
	permSetRole      = usecase.Perm("user", "set-role", "", "admin.set_role_forbidden", "You are not allowed to change users role")
	permSetEmail     = usecase.Perm("user", "set-email", domain.ScopeUsersWrite, "admin.set_email_forbidden", "You are not allowed to set users email")
	permBan          = usecase.Perm("user", "ban", domain.ScopeUsersWrite, "admin.ban_forbidden", "You are not allowed to ban users")
	permImpersonate  = usecase.Perm("user", "impersonate", "", "admin.impersonate_forbidden", "You are not allowed to impersonate users")
	permDeleteUser   = usecase.Perm("user", "delete", domain.ScopeUsersWrite, "admin.delete_user_forbidden", "You are not allowed to delete users")
	permSetPassword  = usecase.Perm("user", "set-password", domain.ScopeUsersWrite, "admin.set_password_forbidden", "You are not allowed to set users password")
	permListSessions = usecase.Perm("session", "list", domain.ScopeUsersRead, "admin.list_sessions_forbidden", "You are not allowed to list users sessions")
	permRevoke       = usecase.Perm("session", "revoke", domain.ScopeUsersWrite, "admin.revoke_sessions_forbidden", "You are not allowed to revoke users sessions")
)

// Administration is the admin plugin's use cases: platform administrators
// managing users and their sessions, and trusted backends doing the same
// with a service key (the trusted API's users). Every action is authorised
// (the admin access control for a signed-in user, the scope for a key) and
// recorded in the audit log, refusals included.
type Administration struct {
	users       ports.UserRepository
	credentials ports.CredentialRepository
	// trust holds the users' trusted browsers (domain.PurposeTrustDevice),
	// forgotten when an administrator sets a password.
	trust     ports.VerificationRepository
	sessions  ports.SessionRepository
	hasher    ports.PasswordHasher
	blocklist ports.PasswordBlocklist
	issuer    usecase.SessionIssuer
	revoker   usecase.SessionRevoker
	audit     usecase.Auditor
	ids       ports.IDGenerator
	clock     ports.Clock
	stepUp    usecase.StepUp
	settings  usecase.AuthSettings
	admin     usecase.AdminSettings
	sso       usecase.SSOGate
}

// UseSSO refuses the passwords that administrators and trusted backends
// set for the addresses policy sends to their organization's identity
// provider.
func (a *Administration) UseSSO(policy usecase.SSOPolicy) *Administration {
	a.sso = usecase.NewSSOGate(policy, a.audit)
	return a
}

// NewAdministration returns the admin use cases.
func NewAdministration(users ports.UserRepository, credentials ports.CredentialRepository, verifications ports.VerificationRepository,
	sessions ports.SessionRepository, hasher ports.PasswordHasher, blocklist ports.PasswordBlocklist, audit usecase.Auditor, passkeys ports.PasskeyRepository,
	tokens ports.TokenGenerator, ids ports.IDGenerator, clock ports.Clock, settings usecase.AuthSettings, admin usecase.AdminSettings) *Administration {
	usecase.MustHave(users, credentials, verifications, sessions, hasher, blocklist, passkeys, tokens, ids, clock)
	return &Administration{
		users: users, credentials: credentials, trust: verifications, sessions: sessions, hasher: hasher, blocklist: blocklist,
		issuer:  usecase.NewSessionIssuer(sessions, audit.Events(), tokens, ids, clock, settings.Sessions),
		revoker: usecase.NewSessionRevoker(sessions, audit.Events(), clock),
		audit:   audit, ids: ids, clock: clock, settings: settings, admin: admin,
		stepUp: usecase.NewStepUp(passkeys, clock, settings.StepUpWindow),
	}
}

// IsAdmin reports whether u administers the platform.
func (a *Administration) IsAdmin(u *domain.User) bool { return a.admin.Admins.IsAdmin(u) }

// HasPermission reports whether the signed-in user holds every requested
// admin permission.
func (a *Administration) HasPermission(p usecase.Principal, requested domain.Permissions) bool {
	return a.admin.Admins.Allows(p.User, requested)
}

// authorize refuses a caller who lacks a permission of ps: a signed-in user
// without the admin permission, with the permission's own code; a service
// key without the scope; anyone else.
func (a *Administration) authorize(req usecase.Caller, ps ...usecase.Permission) error {
	for _, p := range ps {
		switch r := req.(type) {
		case usecase.AdminRequest:
			if !a.admin.Admins.Allows(r.Principal.User, p.Perms) {
				return usecase.Forbidden(p.Code, p.Message)
			}
		case usecase.TrustedRequest:
			if err := r.Need(p.Scope); err != nil {
				return err
			}
		default:
			return usecase.Forbidden(p.Code, p.Message)
		}
	}
	return nil
}

// audited authorises req and runs fn, the change of action on t, with its
// audit entry and its events in one unit of work (usecase.Auditor.Change);
// a refusal is recorded on its own.
func (a *Administration) audited(ctx context.Context, req usecase.Caller, action string, t usecase.Target,
	fn func(ctx context.Context, emit usecase.Emit) error, ps ...usecase.Permission) error {
	if err := a.authorize(req, ps...); err != nil {
		return a.audit.Record(ctx, req.Actor(), action, t, err)
	}
	return a.audit.Change(ctx, req.Actor(), action, &t, fn)
}

// ChangeUser runs fn on the user id as an operator's change to that user,
// for the operators' use cases of another context (mfa.Factors): authorised
// with the user-update permission, audited as action (refusals included),
// fn given the user, loaded as GetUser answers.
func (a *Administration) ChangeUser(ctx context.Context, req usecase.Caller, action string, id domain.UserID,
	fn func(ctx context.Context, emit usecase.Emit, u *domain.User) error) error {
	return a.audited(ctx, req, action, userTarget(id), func(ctx context.Context, emit usecase.Emit) error {
		u, err := a.getUser(ctx, id)
		if err != nil {
			return err
		}
		return fn(ctx, emit, u)
	}, permUpdateUser)
}

func userTarget(id domain.UserID) usecase.Target { return usecase.Target{Type: "user", ID: string(id)} }

// getUser loads a user, answering Better Auth's USER_NOT_FOUND when missing.
func (a *Administration) getUser(ctx context.Context, id domain.UserID) (*domain.User, error) {
	u, err := a.users.Get(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, errAdminUserNotFound
	}
	return u, err
}

// CreateUser is an administrator creating an account.
type CreateUser struct {
	Email         string
	Name          string
	Password      string // optional: without it the user signs in after a reset
	Roles         []domain.PlatformRole
	EmailVerified bool
	Image         string
	// PublicMetadata and PrivateMetadata are JSON objects as sent (nil
	// means {}); the admin plugin sends none.
	PublicMetadata  []byte
	PrivateMetadata []byte
}

// CreateUser creates an account (user.created). Setting roles needs the
// set-role permission too.
func (a *Administration) CreateUser(ctx context.Context, req usecase.Caller, cmd CreateUser) (*domain.User, error) {
	ps := []usecase.Permission{permCreateUser}
	if len(cmd.Roles) > 0 {
		ps = append(ps, permSetRole)
	}
	action := usecase.ActionOf(req, "admin.create-user", "users.create")
	// The entry names the user created, like service-key.create names its key.
	t := usecase.Target{Type: "user"}
	err := a.authorize(req, ps...)
	var u *domain.User
	var cred *domain.Credential
	if err == nil {
		// The password is hashed before the unit of work begins.
		u, cred, err = a.buildUser(ctx, cmd)
	}
	if err != nil {
		return nil, a.audit.Record(ctx, req.Actor(), action, t, err)
	}
	err = a.audit.Change(ctx, req.Actor(), action, &t, func(ctx context.Context, emit usecase.Emit) error {
		if err := a.storeUser(ctx, u, cred, emit); err != nil {
			return err
		}
		t.ID = string(u.ID())
		return nil
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// newUser builds and stores the user of cmd (user.created), with a
// credential when it has a password.
func (a *Administration) newUser(ctx context.Context, cmd CreateUser, emit usecase.Emit) (*domain.User, error) {
	u, cred, err := a.buildUser(ctx, cmd)
	if err != nil {
		return nil, err
	}
	if err := a.storeUser(ctx, u, cred, emit); err != nil {
		return nil, err
	}
	return u, nil
}

// storeUser stores u, with cred when not nil, and emits user.created.
func (a *Administration) storeUser(ctx context.Context, u *domain.User, cred *domain.Credential, emit usecase.Emit) error {
	var err error
	if cred == nil {
		err = a.users.Create(ctx, u)
	} else {
		err = a.credentials.CreateUser(ctx, u, cred)
	}
	if errors.Is(err, domain.ErrConflict) {
		return usecase.ErrUserExists
	}
	if err != nil {
		return err
	}
	emit(domain.EventUserCreated, u)
	return nil
}

// buildUser builds the user of cmd and, when it has a password, its
// credential (the password checked and hashed).
func (a *Administration) buildUser(ctx context.Context, cmd CreateUser) (*domain.User, *domain.Credential, error) {
	public, err := parseMetadata(cmd.PublicMetadata, "publicMetadata")
	if err != nil {
		return nil, nil, err
	}
	private, err := parseMetadata(cmd.PrivateMetadata, "privateMetadata")
	if err != nil {
		return nil, nil, err
	}
	email, err := domain.NewEmail(cmd.Email)
	if err != nil {
		return nil, nil, err
	}
	now := a.clock.Now()
	u, err := domain.NewUser(domain.UserID(a.ids.NewID()), cmd.Name, email, now)
	if err != nil {
		return nil, nil, err
	}
	if len(cmd.Roles) > 0 {
		if err := u.SetRoles(cmd.Roles, now); err != nil {
			return nil, nil, err
		}
	}
	if cmd.EmailVerified {
		u.MarkEmailVerified(now)
	}
	if err := u.SetImage(cmd.Image, now); err != nil {
		return nil, nil, err
	}
	if public != nil {
		u.SetPublicMetadata(*public, now)
	}
	if private != nil {
		u.SetPrivateMetadata(*private, now)
	}
	if cmd.Password == "" {
		return u, nil, nil
	}
	hash, err := a.hashPassword(ctx, u, cmd.Password, "password")
	if err != nil {
		return nil, nil, err
	}
	return u, domain.NewCredential(u.ID(), hash, now), nil
}

// hashPassword checks password against the policy for u and hashes it.
func (a *Administration) hashPassword(ctx context.Context, u *domain.User, password, location string) (string, error) {
	// An address whose organization requires its provider may be created
	// (the provider links it at the first sign-in), but never given a
	// password: it could not be used, and would be a way in the
	// organization does not control once the requirement is lifted.
	if _, required, err := a.sso.Required(ctx, u.Email()); err != nil {
		return "", err
	} else if required {
		return "", usecase.ErrSSOPassword(location)
	}
	if err := a.settings.Passwords.Check(location, password, a.blocklist.Contains, a.settings.PasswordContext(u.Email(), u.Name())...); err != nil {
		return "", err
	}
	hash, err := a.hasher.Hash(ctx, password)
	if err != nil {
		return "", domain.Internal("admin: hash password", err)
	}
	return hash, nil
}

// ListUsers returns a page of users and how many match.
func (a *Administration) ListUsers(ctx context.Context, req usecase.AdminRequest, q ports.UserQuery) ([]*domain.User, int, error) {
	if err := a.authorize(req, permListUsers); err != nil {
		return nil, 0, a.audit.Record(ctx, req.Actor(), "admin.list-users", usecase.Target{Type: "user"}, err)
	}
	return a.users.List(ctx, q)
}

// GetUser returns one user.
func (a *Administration) GetUser(ctx context.Context, req usecase.Caller, id domain.UserID) (*domain.User, error) {
	if err := a.authorize(req, permGetUser); err != nil {
		return nil, a.audit.Record(ctx, req.Actor(), usecase.ActionOf(req, "admin.get-user", "users.get"), userTarget(id), err)
	}
	return a.getUser(ctx, id)
}

// AdminUserPatch is what an administrator may change on a user; nil fields
// stay as they are.
type AdminUserPatch struct {
	Name          *string
	Image         *string
	Email         *string
	EmailVerified *bool
	Roles         []domain.PlatformRole
	// PublicMetadata and PrivateMetadata replace the whole object when not
	// nil; they are JSON objects as sent.
	PublicMetadata  []byte
	PrivateMetadata []byte
}

// isEmpty reports whether the patch changes nothing.
func (p AdminUserPatch) isEmpty() bool {
	return p.Name == nil && p.Image == nil && p.Email == nil && p.EmailVerified == nil && p.Roles == nil &&
		p.PublicMetadata == nil && p.PrivateMetadata == nil
}

// UpdateUser changes a user. Changing roles needs set-role and changing the
// address needs set-email, beside update.
func (a *Administration) UpdateUser(ctx context.Context, req usecase.Caller, id domain.UserID, patch AdminUserPatch) (*domain.User, error) {
	ps := []usecase.Permission{permUpdateUser}
	if patch.Roles != nil {
		ps = append(ps, permSetRole)
	}
	if patch.Email != nil {
		ps = append(ps, permSetEmail)
	}
	var updated *domain.User
	err := a.audited(ctx, req, usecase.ActionOf(req, "admin.update-user", "users.update"), userTarget(id), func(ctx context.Context, emit usecase.Emit) error {
		var err error
		if updated, err = a.updateUser(ctx, id, patch); err != nil {
			return err
		}
		emit(domain.EventUserUpdated, updated)
		return nil
	}, ps...)
	if err != nil {
		return nil, err
	}
	return updated, nil
}

// updateUser applies patch to the user id; an empty patch is refused.
func (a *Administration) updateUser(ctx context.Context, id domain.UserID, patch AdminUserPatch) (*domain.User, error) {
	public, err := parseMetadata(patch.PublicMetadata, "publicMetadata")
	if err != nil {
		return nil, err
	}
	private, err := parseMetadata(patch.PrivateMetadata, "privateMetadata")
	if err != nil {
		return nil, err
	}
	if patch.isEmpty() {
		return nil, errNoDataToUpdate
	}
	var email domain.Email
	if patch.Email != nil {
		var err error
		if email, err = domain.NewEmail(*patch.Email); err != nil {
			return nil, err
		}
	}
	var updated *domain.User
	err = a.users.Update(ctx, id, func(u *domain.User) error {
		now := a.clock.Now()
		if patch.Name != nil {
			if err := u.Rename(*patch.Name, now); err != nil {
				return err
			}
		}
		if patch.Image != nil {
			if err := u.SetImage(*patch.Image, now); err != nil {
				return err
			}
		}
		if patch.Email != nil {
			u.ChangeEmail(email, u.EmailVerified() && email == u.Email(), now)
		}
		if patch.EmailVerified != nil {
			if *patch.EmailVerified {
				u.MarkEmailVerified(now)
			} else {
				u.ChangeEmail(u.Email(), false, now)
			}
		}
		if patch.Roles != nil {
			if err := u.SetRoles(patch.Roles, now); err != nil {
				return err
			}
		}
		if public != nil {
			u.SetPublicMetadata(*public, now)
		}
		if private != nil {
			u.SetPrivateMetadata(*private, now)
		}
		updated = u
		return nil
	})
	if err != nil {
		return nil, a.userErr(err)
	}
	return updated, nil
}

// userErr maps a missing user and a taken address to Better Auth's codes.
func (a *Administration) userErr(err error) error { return usecase.AdminUserErr(err) }

// SetRole replaces a user's platform roles.
func (a *Administration) SetRole(ctx context.Context, req usecase.AdminRequest, id domain.UserID, roles []domain.PlatformRole) (*domain.User, error) {
	var updated *domain.User
	err := a.audited(ctx, req, "admin.set-role", userTarget(id), func(ctx context.Context, emit usecase.Emit) error {
		if err := a.userErr(a.users.Update(ctx, id, func(u *domain.User) error {
			updated = u
			return u.SetRoles(roles, a.clock.Now())
		})); err != nil {
			return err
		}
		emit(domain.EventUserUpdated, updated)
		return nil
	}, permSetRole)
	if err != nil {
		return nil, err
	}
	return updated, nil
}

// BanUser bans a user for reason, for expiresIn (zero: until unbanned)
// (user.banned), and revokes all their sessions (session.revoked).
func (a *Administration) BanUser(ctx context.Context, req usecase.Caller, id domain.UserID, reason string, expiresIn time.Duration) (*domain.User, error) {
	var updated *domain.User
	err := a.audited(ctx, req, usecase.ActionOf(req, "admin.ban-user", "users.ban"), userTarget(id), func(ctx context.Context, emit usecase.Emit) error {
		if usecase.IsSelf(req, id) {
			return errCannotBanYourself
		}
		var err error
		updated, err = a.banUser(ctx, id, reason, expiresIn, emit)
		return err
	}, permBan)
	if err != nil {
		return nil, err
	}
	return updated, nil
}

// banUser bans the user id and ends their sessions.
func (a *Administration) banUser(ctx context.Context, id domain.UserID, reason string, expiresIn time.Duration, emit usecase.Emit) (*domain.User, error) {
	now := a.clock.Now()
	var expires time.Time
	if expiresIn > 0 {
		expires = now.Add(expiresIn)
	}
	var updated *domain.User
	err := a.users.Update(ctx, id, func(u *domain.User) error {
		updated = u
		return u.Ban(reason, expires, now)
	})
	if err != nil {
		return nil, a.userErr(err)
	}
	emit(domain.EventUserBanned, updated)
	if err := a.revoker.RevokeAll(ctx, id, ""); err != nil {
		return nil, err
	}
	return updated, nil
}

// UnbanUser lifts a user's ban.
func (a *Administration) UnbanUser(ctx context.Context, req usecase.Caller, id domain.UserID) (*domain.User, error) {
	var updated *domain.User
	err := a.audited(ctx, req, usecase.ActionOf(req, "admin.unban-user", "users.unban"), userTarget(id), func(ctx context.Context, emit usecase.Emit) error {
		var err error
		if updated, err = a.unbanUser(ctx, id); err != nil {
			return err
		}
		emit(domain.EventUserUnbanned, updated)
		return nil
	}, permBan)
	if err != nil {
		return nil, err
	}
	return updated, nil
}

// unbanUser lifts the ban of the user id.
func (a *Administration) unbanUser(ctx context.Context, id domain.UserID) (*domain.User, error) {
	var updated *domain.User
	err := a.users.Update(ctx, id, func(u *domain.User) error {
		u.Unban(a.clock.Now())
		updated = u
		return nil
	})
	if err != nil {
		return nil, a.userErr(err)
	}
	return updated, nil
}

// ListUserSessions returns a user's live sessions, impersonations included.
func (a *Administration) ListUserSessions(ctx context.Context, req usecase.AdminRequest, id domain.UserID) ([]*domain.Session, error) {
	if err := a.authorize(req, permListSessions); err != nil {
		return nil, a.audit.Record(ctx, req.Actor(), "admin.list-user-sessions", userTarget(id), err)
	}
	if _, err := a.getUser(ctx, id); err != nil {
		return nil, err
	}
	return a.sessions.ListByUser(ctx, id, a.clock.Now())
}

// RevokeUserSession ends one session, named by its public handle.
func (a *Administration) RevokeUserSession(ctx context.Context, req usecase.AdminRequest, id domain.SessionID) error {
	return a.audited(ctx, req, "admin.revoke-user-session", usecase.Target{Type: "session", ID: string(id)}, func(ctx context.Context, _ usecase.Emit) error {
		s, err := a.sessions.Get(ctx, id)
		if errors.Is(err, domain.ErrNotFound) {
			return errAdminSessionMissing
		}
		if err != nil {
			return err
		}
		return usecase.IgnoreGone(a.revoker.Revoke(ctx, s))
	}, permRevoke)
}

// RevokeUserSessions ends all of a user's sessions.
func (a *Administration) RevokeUserSessions(ctx context.Context, req usecase.Caller, id domain.UserID) error {
	return a.audited(ctx, req, usecase.ActionOf(req, "admin.revoke-user-sessions", "users.revoke-sessions"), userTarget(id), func(ctx context.Context, _ usecase.Emit) error {
		if _, err := a.getUser(ctx, id); err != nil {
			return err
		}
		return a.revoker.RevokeAll(ctx, id, "")
	}, permRevoke)
}

// RemoveUser deletes a user and everything they own (user.deleted, with the
// user as they were).
func (a *Administration) RemoveUser(ctx context.Context, req usecase.Caller, id domain.UserID) error {
	return a.audited(ctx, req, usecase.ActionOf(req, "admin.remove-user", "users.delete"), userTarget(id), func(ctx context.Context, emit usecase.Emit) error {
		if usecase.IsSelf(req, id) {
			return errCannotRemoveSelf
		}
		u, err := a.getUser(ctx, id)
		if err != nil {
			return err
		}
		emit(domain.EventUserDeleted, u)
		return a.userErr(a.users.Delete(ctx, id))
	}, permDeleteUser)
}

// SetUserPassword sets a user's password under the password policy, ends
// their sessions and forgets their trusted browsers, since an
// administrator sets a password when the old one can no longer be trusted.
func (a *Administration) SetUserPassword(ctx context.Context, req usecase.Caller, id domain.UserID, password string) error {
	action, t := usecase.ActionOf(req, "admin.set-user-password", "users.set-password"), userTarget(id)
	// The password is checked and hashed before the unit of work begins.
	hash, err := func() (string, error) {
		if err := a.authorize(req, permSetPassword); err != nil {
			return "", err
		}
		u, err := a.getUser(ctx, id)
		if err != nil {
			return "", err
		}
		return a.hashPassword(ctx, u, password, "newPassword")
	}()
	if err != nil {
		return a.audit.Record(ctx, req.Actor(), action, t, err)
	}
	return a.audit.Change(ctx, req.Actor(), action, &t, func(ctx context.Context, _ usecase.Emit) error {
		if err := a.credentials.Put(ctx, domain.NewCredential(id, hash, a.clock.Now())); err != nil {
			return a.userErr(err)
		}
		if _, err := a.trust.DeleteByUser(ctx, id, domain.PurposeTrustDevice); err != nil {
			return err
		}
		return a.revoker.RevokeAll(ctx, id, "")
	})
}

// ImpersonationResult is the session an administrator acts through, with
// its bearer token.
type ImpersonationResult struct {
	Session *domain.Session
	User    *domain.User
	Token   string
}

// ImpersonateUser starts a time-limited session as another user. Other
// administrators cannot be impersonated.
func (a *Administration) ImpersonateUser(ctx context.Context, req usecase.AdminRequest, id domain.UserID, c usecase.Client) (*ImpersonationResult, error) {
	var res *ImpersonationResult
	err := a.audited(ctx, req, "admin.impersonate-user", userTarget(id), func(ctx context.Context, _ usecase.Emit) error {
		u, err := a.getUser(ctx, id)
		if err != nil {
			return err
		}
		if a.admin.Admins.IsAdmin(u) {
			return errCannotImpersonate
		}
		token := a.issuer.Tokens.NewToken()
		s := domain.NewImpersonationSession(domain.SessionID(a.ids.NewID()), u.ID(), req.Principal.User.ID(),
			domain.HashToken(token), c.IPAddress, c.UserAgent, a.admin.ImpersonationTTL, a.clock.Now())
		if err := a.issuer.Create(ctx, s); err != nil {
			return err
		}
		res = &ImpersonationResult{Session: s, User: u, Token: token}
		return nil
	}, permImpersonate)
	return res, err
}

// StopImpersonating ends the impersonation session p and returns the
// administrator's own session, proven by adminToken (kept aside when the
// impersonation began). The administrator must be the one impersonating.
func (a *Administration) StopImpersonating(ctx context.Context, p usecase.Principal, adminToken, requestID, ip string) (*usecase.Principal, error) {
	admin := p.Session.ImpersonatedBy()
	if admin == "" {
		return nil, errNotImpersonating
	}
	var restored *usecase.Principal
	actor := usecase.Actor{Type: domain.ActorUser, ID: string(admin), RequestID: requestID, IPAddress: ip}
	// The impersonation ends (session.revoked) even when the
	// administrator's own session cannot be restored.
	err := a.audit.Record(ctx, actor, "admin.stop-impersonating", userTarget(p.User.ID()), func() error {
		if err := usecase.IgnoreGone(a.revoker.Revoke(ctx, p.Session)); err != nil {
			return err
		}
		if adminToken == "" {
			return usecase.ErrUnauthorized
		}
		s, u, err := a.sessions.GetByTokenHash(ctx, domain.HashToken(adminToken))
		if errors.Is(err, domain.ErrNotFound) || (err == nil && (u.ID() != admin || s.IsExpired(a.clock.Now()))) {
			return usecase.ErrUnauthorized
		}
		if err != nil {
			return err
		}
		restored = &usecase.Principal{Session: s, User: u}
		return nil
	}())
	return restored, err
}

// BootstrapAdmin makes the administrator of a fresh install from the
// command line: a verified account with the admin role (an existing account
// with the address is promoted). With a password it is set under the
// policy; without one, a one-time link to set it is returned.
type BootstrapAdmin struct {
	Email    string
	Name     string
	Password string
}

// BootstrapAdminResult is the administrator and, when no password was
// given, the link that sets one.
type BootstrapAdminResult struct {
	User    *domain.User
	Created bool
	// SetPasswordToken is a one-time reset token (valid for LinkTTL) that
	// POST /api/auth/reset-password accepts with the new password.
	SetPasswordToken string
}

// PasswordLinks is what BootstrapAdmin needs of the password reset (the
// account context's Passwords): a one-time link for a user who
// has no password yet.
type PasswordLinks interface {
	SetPasswordToken(ctx context.Context, u *domain.User) (string, error)
}

// BootstrapAdmin creates or promotes the administrator; see BootstrapAdmin.
// A new administrator is user.created, a promoted one user.updated.
func (a *Administration) BootstrapAdmin(ctx context.Context, cmd BootstrapAdmin, links PasswordLinks) (*BootstrapAdminResult, error) {
	res := &BootstrapAdminResult{}
	t := usecase.Target{Type: "user"}
	err := a.audit.Change(ctx, usecase.CLIActor, "admin.bootstrap", &t, func(ctx context.Context, emit usecase.Emit) error {
		*res = BootstrapAdminResult{}
		email, err := domain.NewEmail(cmd.Email)
		if err != nil {
			return err
		}
		u, err := a.users.GetByEmail(ctx, email)
		switch {
		case errors.Is(err, domain.ErrNotFound):
			u, err = a.newUser(ctx, CreateUser{Email: cmd.Email, Name: cmd.Name, Password: cmd.Password,
				Roles: []domain.PlatformRole{domain.PlatformRoleAdmin}, EmailVerified: true}, emit)
			if err != nil {
				return err
			}
			res.Created = true
		case err != nil:
			return err
		default:
			if u, err = a.promote(ctx, u, cmd.Password); err != nil {
				return err
			}
			emit(domain.EventUserUpdated, u)
		}
		res.User, t.ID = u, string(u.ID())
		if cmd.Password == "" {
			token, err := links.SetPasswordToken(ctx, u)
			if err != nil {
				return err
			}
			res.SetPasswordToken = token
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// promote makes u a verified administrator with password, when not empty,
// as their password, and returns them so.
func (a *Administration) promote(ctx context.Context, u *domain.User, password string) (*domain.User, error) {
	err := a.users.Update(ctx, u.ID(), func(stored *domain.User) error {
		now := a.clock.Now()
		roles := stored.Roles()
		if !slices.Contains(roles, domain.PlatformRoleAdmin) {
			roles = append(roles, domain.PlatformRoleAdmin)
		}
		stored.MarkEmailVerified(now)
		u = stored
		return stored.SetRoles(roles, now)
	})
	if err != nil || password == "" {
		return u, err
	}
	hash, err := a.hashPassword(ctx, u, password, "password")
	if err != nil {
		return nil, err
	}
	return u, a.credentials.Put(ctx, domain.NewCredential(u.ID(), hash, a.clock.Now()))
}
