package framework

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// The admin plugin's routes (better-auth-wire §8) under /api/auth/admin.

func platformRoles(in edge.RoleInput) []domain.PlatformRole {
	out := make([]domain.PlatformRole, len(in))
	for i, r := range in {
		out[i] = domain.PlatformRole(r)
	}
	return out
}

// UserEnvelope is {user}.
type UserEnvelope struct {
	Body struct {
		User UserJSON `json:"user"`
	}
}

func userEnvelope(u *domain.User) *UserEnvelope {
	out := &UserEnvelope{}
	out.Body.User = userJSON(u)
	return out
}

// UserOutput is a bare user object.
type UserOutput struct {
	Body UserJSON
}

// SuccessOutput is {success:true}.
type SuccessOutput struct {
	Body struct {
		Success bool `json:"success" example:"true"`
	}
}

func successOK() *SuccessOutput {
	out := &SuccessOutput{}
	out.Body.Success = true
	return out
}

// AdminCreateUserInput creates an account.
type AdminCreateUserInput struct {
	Body struct {
		Email    string         `json:"email" maxLength:"254" example:"grace@example.com"`
		Password string         `json:"password,omitempty" maxLength:"4096" doc:"Optional: without it the user sets one through a password reset."`
		Name     string         `json:"name" maxLength:"256" example:"Grace Hopper"`
		Role     edge.RoleInput `json:"role,omitempty" doc:"Platform roles (user, admin); needs the set-role permission."`
		Data     *struct {
			EmailVerified bool   `json:"emailVerified,omitempty" doc:"Mark the address verified."`
			Image         string `json:"image,omitempty" maxLength:"2048" doc:"Avatar URL: an absolute http or https URL."`
		} `json:"data,omitempty" doc:"Further user fields."`
	}
}

func (s *API) adminCreateUser(ctx context.Context, in *AdminCreateUserInput) (*UserEnvelope, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return nil, err
	}
	cmd := admin.CreateUser{Email: in.Body.Email, Name: in.Body.Name, Password: in.Body.Password, Roles: platformRoles(in.Body.Role)}
	if d := in.Body.Data; d != nil {
		cmd.EmailVerified, cmd.Image = d.EmailVerified, d.Image
	}
	u, err := s.Administration.CreateUser(ctx, req, cmd)
	if de := (*domain.Error)(nil); errors.As(err, &de) && de.Code == "user.email_exists" {
		// The admin plugin answers a taken address with 400, where sign-up answers 422.
		return nil, edge.NewFrameworkError(http.StatusBadRequest, "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL", de.Message)
	}
	if err != nil {
		return nil, err
	}
	return userEnvelope(u), nil
}

// AdminListUsersInput searches, filters, sorts and pages users.
type AdminListUsersInput struct {
	SearchValue    string `query:"searchValue" maxLength:"256" doc:"Text to search for."`
	SearchField    string `query:"searchField" enum:"email,name" doc:"Field searched (default email)."`
	SearchOperator string `query:"searchOperator" enum:"contains,starts_with,ends_with" doc:"How it matches (default contains); case-insensitive."`
	Limit          int    `query:"limit" minimum:"1" maximum:"1000" doc:"Page size (default 100)."`
	Offset         int    `query:"offset" minimum:"0" doc:"Matches skipped."`
	SortBy         string `query:"sortBy" enum:"createdAt,updatedAt,email,name" doc:"Sort field (default createdAt)."`
	SortDirection  string `query:"sortDirection" enum:"asc,desc" doc:"Sort direction (default asc)."`
	FilterField    string `query:"filterField" enum:"id,email,name,role,banned,emailVerified,createdAt,updatedAt" doc:"Field filtered on."`
	FilterValue    string `query:"filterValue" maxLength:"256" doc:"Value compared: text, true/false, or an RFC 3339 time."`
	FilterOperator string `query:"filterOperator" enum:"eq,ne,lt,lte,gt,gte,contains,starts_with,ends_with" doc:"Comparison (default eq)."`
}

// AdminListUsersOutput is a page of users and how many match.
type AdminListUsersOutput struct {
	Body struct {
		Users  []UserJSON `json:"users"`
		Total  int        `json:"total" doc:"How many users match, across all pages."`
		Limit  *int       `json:"limit,omitempty" doc:"The limit asked for."`
		Offset *int       `json:"offset,omitempty" doc:"The offset asked for."`
	}
}

func (in *AdminListUsersInput) query() (ports.UserQuery, error) {
	q := ports.UserQuery{Limit: 100, Offset: in.Offset, SortBy: ports.UserField(in.SortBy), SortDesc: in.SortDirection == "desc"}
	if in.Limit > 0 {
		q.Limit = in.Limit
	}
	if in.SearchValue != "" {
		field, op := ports.UserFieldEmail, ports.OpContains
		if in.SearchField != "" {
			field = ports.UserField(in.SearchField)
		}
		if in.SearchOperator != "" {
			op = ports.Operator(in.SearchOperator)
		}
		q.Conditions = append(q.Conditions, ports.UserCondition{Field: field, Operator: op, Value: in.SearchValue})
	}
	if in.FilterField != "" {
		op := ports.OpEq
		if in.FilterOperator != "" {
			op = ports.Operator(in.FilterOperator)
		}
		c, err := userCondition(ports.UserField(in.FilterField), op, in.FilterValue)
		if err != nil {
			return q, err
		}
		q.Conditions = append(q.Conditions, c)
	}
	return q, nil
}

// userCondition types a filter value for its field and checks the operator
// suits it.
func userCondition(field ports.UserField, op ports.Operator, raw string) (ports.UserCondition, error) {
	c := ports.UserCondition{Field: field, Operator: op}
	bad := func(msg string) error {
		return domain.Invalid("INVALID_FILTER", "Invalid filter", domain.FieldViolation{Field: "query.filterValue", Message: msg})
	}
	text := op == ports.OpContains || op == ports.OpStartsWith || op == ports.OpEndsWith
	switch field {
	case ports.UserFieldBanned, ports.UserFieldVerified:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return c, bad("must be true or false for " + string(field))
		}
		if op != ports.OpEq && op != ports.OpNe {
			return c, domain.Invalid("INVALID_FILTER", "Invalid filter", domain.FieldViolation{Field: "query.filterOperator", Message: "must be eq or ne for " + string(field)})
		}
		c.Value = b
	case ports.UserFieldCreatedAt, ports.UserFieldUpdatedAt:
		t, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			return c, bad("must be an RFC 3339 time for " + string(field))
		}
		if text {
			return c, domain.Invalid("INVALID_FILTER", "Invalid filter", domain.FieldViolation{Field: "query.filterOperator", Message: "must be a comparison for " + string(field)})
		}
		c.Value = t.UTC()
	case ports.UserFieldRole:
		if op != ports.OpEq && op != ports.OpNe {
			return c, domain.Invalid("INVALID_FILTER", "Invalid filter", domain.FieldViolation{Field: "query.filterOperator", Message: "must be eq or ne for role"})
		}
		c.Value = raw
	default:
		if field == ports.UserFieldEmail {
			raw = strings.ToLower(raw)
		}
		c.Value = raw
	}
	return c, nil
}

func (s *API) adminListUsers(ctx context.Context, in *AdminListUsersInput) (*AdminListUsersOutput, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return nil, err
	}
	q, err := in.query()
	if err != nil {
		return nil, err
	}
	users, total, err := s.Administration.ListUsers(ctx, req, q)
	if err != nil {
		return nil, err
	}
	out := &AdminListUsersOutput{}
	out.Body.Users = make([]UserJSON, len(users))
	for i, u := range users {
		out.Body.Users[i] = userJSON(u)
	}
	out.Body.Total = total
	if in.Limit > 0 {
		out.Body.Limit = &in.Limit
	}
	if in.Offset > 0 {
		out.Body.Offset = &in.Offset
	}
	return out, nil
}

// AdminGetUserInput names a user in the query.
type AdminGetUserInput struct {
	ID string `query:"id" required:"true" minLength:"1" maxLength:"64" doc:"The user's id."`
}

func (s *API) adminGetUser(ctx context.Context, in *AdminGetUserInput) (*UserOutput, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return nil, err
	}
	u, err := s.Administration.GetUser(ctx, req, domain.UserID(in.ID))
	if err != nil {
		return nil, err
	}
	return &UserOutput{Body: userJSON(u)}, nil
}

// AdminUpdateUserInput changes a user's fields.
type AdminUpdateUserInput struct {
	Body struct {
		UserID string `json:"userId" minLength:"1" maxLength:"64"`
		Data   struct {
			Name          *string        `json:"name,omitempty" minLength:"1" maxLength:"256"`
			Image         *string        `json:"image,omitempty" maxLength:"2048" doc:"Avatar URL: an absolute http or https URL."`
			Email         *string        `json:"email,omitempty" maxLength:"254" doc:"Needs the set-email permission; the new address is unverified."`
			EmailVerified *bool          `json:"emailVerified,omitempty"`
			Role          edge.RoleInput `json:"role,omitempty" doc:"Needs the set-role permission."`
		} `json:"data" doc:"The fields to change. Passwords change through set-user-password; ids never change."`
	}
}

func (s *API) adminUpdateUser(ctx context.Context, in *AdminUpdateUserInput) (*UserOutput, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return nil, err
	}
	d := in.Body.Data
	patch := admin.AdminUserPatch{Name: d.Name, Image: d.Image, Email: d.Email, EmailVerified: d.EmailVerified}
	if d.Role != nil {
		patch.Roles = platformRoles(d.Role)
	}
	u, err := s.Administration.UpdateUser(ctx, req, domain.UserID(in.Body.UserID), patch)
	if err != nil {
		return nil, err
	}
	return &UserOutput{Body: userJSON(u)}, nil
}

// AdminSetRoleInput replaces a user's roles.
type AdminSetRoleInput struct {
	Body struct {
		UserID string         `json:"userId" minLength:"1" maxLength:"64"`
		Role   edge.RoleInput `json:"role"`
	}
}

func (s *API) adminSetRole(ctx context.Context, in *AdminSetRoleInput) (*UserEnvelope, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return nil, err
	}
	u, err := s.Administration.SetRole(ctx, req, domain.UserID(in.Body.UserID), platformRoles(in.Body.Role))
	if err != nil {
		return nil, err
	}
	return userEnvelope(u), nil
}

// AdminBanUserInput bans a user.
type AdminBanUserInput struct {
	Body struct {
		UserID       string `json:"userId" minLength:"1" maxLength:"64"`
		BanReason    string `json:"banReason,omitempty" maxLength:"1024"`
		BanExpiresIn int64  `json:"banExpiresIn,omitempty" minimum:"1" maximum:"315360000" doc:"Seconds until the ban lifts; absent: until unbanned."`
	}
}

func (s *API) adminBanUser(ctx context.Context, in *AdminBanUserInput) (*UserEnvelope, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return nil, err
	}
	u, err := s.Administration.BanUser(ctx, req, domain.UserID(in.Body.UserID), in.Body.BanReason, time.Duration(in.Body.BanExpiresIn)*time.Second)
	if err != nil {
		return nil, err
	}
	return userEnvelope(u), nil
}

// AdminUserIDInput names a user in the body.
type AdminUserIDInput struct {
	Body struct {
		UserID string `json:"userId" minLength:"1" maxLength:"64"`
	}
}

func (s *API) adminUnbanUser(ctx context.Context, in *AdminUserIDInput) (*UserEnvelope, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return nil, err
	}
	u, err := s.Administration.UnbanUser(ctx, req, domain.UserID(in.Body.UserID))
	if err != nil {
		return nil, err
	}
	return userEnvelope(u), nil
}

// SessionsEnvelope is {sessions}.
type SessionsEnvelope struct {
	Body struct {
		Sessions []SessionJSON `json:"sessions"`
	}
}

func (s *API) adminListUserSessions(ctx context.Context, in *AdminUserIDInput) (*SessionsEnvelope, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return nil, err
	}
	sessions, err := s.Administration.ListUserSessions(ctx, req, domain.UserID(in.Body.UserID))
	if err != nil {
		return nil, err
	}
	out := &SessionsEnvelope{}
	out.Body.Sessions = make([]SessionJSON, len(sessions))
	for i, ss := range sessions {
		out.Body.Sessions[i] = sessionJSON(ss)
	}
	return out, nil
}

// AdminRevokeSessionInput names a session by its public handle.
type AdminRevokeSessionInput struct {
	Body struct {
		SessionToken string `json:"sessionToken" minLength:"1" maxLength:"64" doc:"The session's public handle (the token field of a session object)."`
	}
}

func (s *API) adminRevokeUserSession(ctx context.Context, in *AdminRevokeSessionInput) (*SuccessOutput, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.Administration.RevokeUserSession(ctx, req, domain.SessionID(in.Body.SessionToken)); err != nil {
		return nil, err
	}
	return successOK(), nil
}

func (s *API) adminRevokeUserSessions(ctx context.Context, in *AdminUserIDInput) (*SuccessOutput, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.Administration.RevokeUserSessions(ctx, req, domain.UserID(in.Body.UserID)); err != nil {
		return nil, err
	}
	return successOK(), nil
}

func (s *API) adminRemoveUser(ctx context.Context, in *AdminUserIDInput) (*SuccessOutput, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.Administration.RemoveUser(ctx, req, domain.UserID(in.Body.UserID)); err != nil {
		return nil, err
	}
	return successOK(), nil
}

// AdminSetPasswordInput sets a user's password.
type AdminSetPasswordInput struct {
	Body struct {
		UserID      string `json:"userId" minLength:"1" maxLength:"64"`
		NewPassword string `json:"newPassword" doc:"Under the password policy. The user's sessions end."`
	}
}

func (s *API) adminSetUserPassword(ctx context.Context, in *AdminSetPasswordInput) (*edge.StatusOutput, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.Administration.SetUserPassword(ctx, req, domain.UserID(in.Body.UserID), in.Body.NewPassword); err != nil {
		return nil, err
	}
	return edge.StatusOK(), nil
}

// SessionUserOutput is {session, user} with the cookies that switch to it.
type SessionUserOutput struct {
	edge.SessionHeaders
	Body struct {
		Session SessionJSON `json:"session"`
		User    UserJSON    `json:"user"`
	}
}

func (s *API) adminImpersonateUser(ctx context.Context, in *AdminUserIDInput) (*SessionUserOutput, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return nil, err
	}
	adminToken, _ := s.Cookies.Token(edge.RequestInfoFrom(ctx).Request)
	res, err := s.Administration.ImpersonateUser(ctx, req, domain.UserID(in.Body.UserID), edge.RequestInfoFrom(ctx).Client())
	if err != nil {
		return nil, err
	}
	out := &SessionUserOutput{}
	out.Body.Session, out.Body.User = sessionJSON(res.Session), userJSON(res.User)
	out.SetCookie = append(out.SetCookie, s.Cookies.AdminSessionCookie(adminToken, req.Principal.Session))
	out.SignIn(s.Cookies, res.Token, res.Session)
	return out, nil
}

func (s *API) adminStopImpersonating(ctx context.Context, _ *struct{}) (*SessionUserOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	adminToken := s.Cookies.AdminToken(edge.RequestInfoFrom(ctx).Request)
	restored, err := s.Administration.StopImpersonating(ctx, p, adminToken, edge.RequestIDFrom(ctx), edge.RequestInfoFrom(ctx).ClientIP)
	if err != nil {
		return nil, err
	}
	out := &SessionUserOutput{}
	out.Body.Session, out.Body.User = sessionJSON(restored.Session), userJSON(restored.User)
	out.SetCookie = append(out.SetCookie, s.Cookies.Cookie(s.Cookies.AdminSession, "", -1))
	out.SignIn(s.Cookies, adminToken, restored.Session)
	return out, nil
}

// HasPermissionInput asks whether the caller holds permissions.
type HasPermissionInput struct {
	Body struct {
		Permissions edge.PermissionsInput `json:"permissions,omitempty"`
		Permission  edge.PermissionsInput `json:"permission,omitempty" doc:"Deprecated name of permissions."`
	}
}

// HasPermissionOutput is Better Auth's {error:null, success}.
type HasPermissionOutput struct {
	Body struct {
		Error   *string `json:"error" nullable:"true" doc:"Always null."`
		Success bool    `json:"success" doc:"Whether every requested action is granted."`
	}
}

var errNoPermissions = domain.Invalid("INVALID_PERMISSIONS", "Invalid permissions", domain.FieldViolation{Field: "body.permissions", Message: "is required"})

func (in *HasPermissionInput) permissions() (domain.Permissions, error) {
	p := in.Body.Permissions
	if len(p) == 0 {
		p = in.Body.Permission
	}
	if len(p) == 0 {
		return nil, errNoPermissions
	}
	return domain.Permissions(p), nil
}

func (s *API) adminHasPermission(ctx context.Context, in *HasPermissionInput) (*HasPermissionOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	perms, err := in.permissions()
	if err != nil {
		return nil, err
	}
	out := &HasPermissionOutput{}
	out.Body.Success = s.Administration.HasPermission(p, perms)
	return out, nil
}

// addAdminRoutes registers the admin plugin (framework and auth contracts)
// and the administration routes under /api/admin (auth contract).
func (s *API) AddAdminRoutes() {
	type op = huma.Operation
	const tag = "Platform administration"
	fw := edge.ContractFramework
	admin := func(id, method, path, summary, description string) op {
		return edge.WithPolicy(op{OperationID: id, Method: method, Path: edge.FrameworkBase + "/admin" + path, Tags: []string{tag},
			Summary: summary, Description: description + " Needs a platform administrator's session: 401 without a session, 403 without the permission." + edge.AdministrationNote("ADMIN_MFA_REQUIRED"),
			Security: edge.SessionSecurity, Errors: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests}}, edge.Administration)
	}
	edge.Add(s.routes, fw, admin("adminCreateUser", http.MethodPost, "/create-user", "Create a user",
		"Creates an account, with a password or without one (the user then sets it through a reset). Needs user:create, and user:set-role to give roles."),
		s.adminCreateUser, edge.ContractAuth)
	edge.Add(s.routes, fw, admin("adminListUsers", http.MethodGet, "/list-users", "List users",
		"Searches (email or name, case-insensitive), filters, sorts and pages users, with the total. Needs user:list."), s.adminListUsers, edge.ContractAuth)
	edge.Add(s.routes, fw, admin("adminGetUser", http.MethodGet, "/get-user", "Get a user", "Needs user:get."), s.adminGetUser, edge.ContractAuth)
	edge.Add(s.routes, fw, admin("adminUpdateUser", http.MethodPost, "/update-user", "Update a user",
		"Changes name, image, address (user:set-email), verification and roles (user:set-role). Needs user:update."), s.adminUpdateUser, edge.ContractAuth)
	edge.Add(s.routes, fw, admin("adminSetRole", http.MethodPost, "/set-role", "Set a user's roles",
		"Replaces the user's platform roles (user or admin; others are refused). Needs user:set-role."), s.adminSetRole, edge.ContractAuth)
	edge.Add(s.routes, fw, admin("adminBanUser", http.MethodPost, "/ban-user", "Ban a user",
		"Bans the user, for banExpiresIn seconds or until unbanned, and ends their sessions; their sign-in answers 403 BANNED_USER. Administrators cannot ban themselves. Needs user:ban."),
		s.adminBanUser, edge.ContractAuth)
	edge.Add(s.routes, fw, admin("adminUnbanUser", http.MethodPost, "/unban-user", "Unban a user", "Needs user:ban."), s.adminUnbanUser, edge.ContractAuth)
	edge.Add(s.routes, fw, admin("adminListUserSessions", http.MethodPost, "/list-user-sessions", "List a user's sessions",
		"Live sessions, impersonations included. Needs session:list."), s.adminListUserSessions, edge.ContractAuth)
	edge.Add(s.routes, fw, admin("adminRevokeUserSession", http.MethodPost, "/revoke-user-session", "Revoke a session",
		"Ends one session, named by its public handle. Needs session:revoke."), s.adminRevokeUserSession, edge.ContractAuth)
	edge.Add(s.routes, fw, admin("adminRevokeUserSessions", http.MethodPost, "/revoke-user-sessions", "Revoke a user's sessions",
		"Needs session:revoke."), s.adminRevokeUserSessions, edge.ContractAuth)
	edge.Add(s.routes, fw, admin("adminRemoveUser", http.MethodPost, "/remove-user", "Delete a user",
		"Deletes the account with its sessions and memberships. Administrators cannot remove themselves. Needs user:delete."), s.adminRemoveUser, edge.ContractAuth)
	edge.Add(s.routes, fw, admin("adminSetUserPassword", http.MethodPost, "/set-user-password", "Set a user's password",
		"Sets the password under the password policy and ends the user's sessions. Needs user:set-password."), s.adminSetUserPassword, edge.ContractAuth)
	edge.Add(s.routes, fw, admin("adminImpersonateUser", http.MethodPost, "/impersonate-user", "Impersonate a user",
		"Starts a time-limited session as the user (administrators cannot be impersonated) and keeps the administrator's own session aside in the admin_session cookie. Needs user:impersonate."),
		s.adminImpersonateUser, edge.ContractAuth)
	stop := admin("adminStopImpersonating", http.MethodPost, "/stop-impersonating", "Stop impersonating",
		"Ends the impersonation session and restores the administrator's own session.")
	stop.Description = "Ends the impersonation session and restores the administrator's own session from the admin_session cookie. 400 NOT_IMPERSONATING in an ordinary session; 401 without a session."
	// Leaving an impersonation is like signing out: never refused for a
	// missing second factor.
	stop = edge.WithPolicy(stop, func(p *edge.Policy) { p.Administers = false }, edge.AllowedWhileImpersonating)
	stop.Errors = append(stop.Errors, http.StatusBadRequest)
	edge.Add(s.routes, fw, stop, s.adminStopImpersonating, edge.ContractAuth)
	has := admin("adminHasPermission", http.MethodPost, "/has-permission", "Check admin permissions",
		"Whether the signed-in user holds every requested admin permission, such as {\"user\": [\"ban\"]}.")
	has.Description = "Whether the signed-in user holds every requested admin permission, such as {\"user\": [\"ban\"]}. Any signed-in user may ask about themselves; 401 without a session." + edge.AdministrationNote("ADMIN_MFA_REQUIRED")
	edge.Add(s.routes, fw, edge.WithPolicy(has, edge.AllowedWhileImpersonating), s.adminHasPermission, edge.ContractAuth)
}
