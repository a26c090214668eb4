package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/domain"
)

// The trusted user routes (backend contract): a consumer's backend manages
// any user with a service key. The rules live in admin.Administration,
// the admin plugin's use cases, which check the key's scope; this file only
// translates, and backendWords words their errors. Unlike the framework's
// user object, the trusted one carries the user's metadata, times are RFC
// 3339 and errors problem+json.

// UserMetadataJSON is a metadata object, kept as sent; set says whether the
// request carried it.
type UserMetadataJSON struct {
	raw json.RawMessage
	set bool
}

// UnmarshalJSON keeps the object as sent; the schema has checked its shape
// and the use case checks its size.
func (m *UserMetadataJSON) UnmarshalJSON(b []byte) error {
	m.raw, m.set = append(json.RawMessage(nil), bytes.TrimSpace(b)...), true
	return nil
}

// MarshalJSON writes the object, {} when empty.
func (m UserMetadataJSON) MarshalJSON() ([]byte, error) {
	if len(m.raw) == 0 {
		return []byte("{}"), nil
	}
	return m.raw, nil
}

// Schema documents a free-form object.
func (UserMetadataJSON) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeObject, AdditionalProperties: true,
		Description: "A free-form JSON object of at most 8 KiB (8192 bytes) serialised without spaces; {} when empty."}
}

var _ huma.SchemaProvider = UserMetadataJSON{}

// bytes returns the object sent, or nil when the request did not carry it.
func (m UserMetadataJSON) bytes() []byte {
	if !m.set {
		return nil
	}
	return m.raw
}

// BackendUserJSON is a user as the trusted API returns it.
type BackendUserJSON struct {
	ID               string              `json:"id" doc:"The user's identifier." example:"0192f5e4-8a4b-7cc1-9a51-0b3c8d9e1f20"`
	Email            string              `json:"email" format:"email" doc:"The address, lower-cased." example:"ada@example.com"`
	Name             string              `json:"name" doc:"Display name." example:"Ada Lovelace"`
	EmailVerified    bool                `json:"emailVerified" doc:"Whether the address is verified."`
	Image            *string             `json:"image" nullable:"true" doc:"Avatar URL, or null." example:"https://example.com/ada.png"`
	Role             string              `json:"role" doc:"Platform roles, comma-separated: user or admin. Set by platform administrators only." example:"user"`
	Banned           bool                `json:"banned" doc:"Whether the user is banned (as stored: a ban whose banExpires has passed no longer stops sign-in, and stays listed until lifted)."`
	BanReason        *string             `json:"banReason" nullable:"true" doc:"Why the user was banned, or null."`
	BanExpires       *time.Time          `json:"banExpires" nullable:"true" doc:"When the ban lifts, or null for never (or not banned)."`
	PublicMetadata   UserMetadataJSON    `json:"publicMetadata" doc:"Your backend's data about the user that the user may see."`
	PrivateMetadata  UserMetadataJSON    `json:"privateMetadata" doc:"Your backend's data about the user that only backends see."`
	TwoFactorEnabled bool                `json:"twoFactorEnabled" doc:"Whether sign-in asks the user for a second factor (an authenticator app's code, a backup code or an e-mailed code). Never the secrets."`
	Passkeys         int                 `json:"passkeys" minimum:"0" doc:"How many passkeys the user has registered; a passkey signs in on its own."`
	LinkedAccounts   []LinkedAccountJSON `json:"linkedAccounts" nullable:"false" doc:"The user's accounts at upstream identity providers, oldest first. Never their tokens."`
	CreatedAt        time.Time           `json:"createdAt"`
	UpdatedAt        time.Time           `json:"updatedAt"`
}

// LinkedAccountJSON is one of a user's upstream accounts.
type LinkedAccountJSON struct {
	ID         string    `json:"id" doc:"The linked account's id (to unlink it)."`
	ProviderID string    `json:"providerId" example:"google"`
	AccountID  string    `json:"accountId" doc:"The provider's subject for the person."`
	Email      string    `json:"email" doc:"The address the provider gave at the last sign-in."`
	CreatedAt  time.Time `json:"createdAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
}

func linkedAccountsJSON(views []federation.AccountView) []LinkedAccountJSON {
	out := make([]LinkedAccountJSON, 0, len(views))
	for _, v := range views {
		out = append(out, LinkedAccountJSON{ID: v.ID, ProviderID: v.ProviderID, AccountID: v.Subject, Email: v.Email, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt})
	}
	return out
}

func backendUserJSON(u *domain.User, passkeys int, linked []federation.AccountView) BackendUserJSON {
	a, meta := u.Access(), u.Metadata()
	out := BackendUserJSON{ID: string(u.ID()), Email: string(u.Email()), Name: u.Name(), EmailVerified: u.EmailVerified(),
		LinkedAccounts: linkedAccountsJSON(linked),
		Role:           domain.JoinPlatformRoles(a.Roles), Banned: a.Banned, TwoFactorEnabled: u.TwoFactorEnabled(), Passkeys: passkeys,
		PublicMetadata:  UserMetadataJSON{raw: meta.Public.JSON(), set: true},
		PrivateMetadata: UserMetadataJSON{raw: meta.Private.JSON(), set: true},
		CreatedAt:       u.CreatedAt(), UpdatedAt: u.UpdatedAt()}
	if img := u.Image(); img != "" {
		out.Image = &img
	}
	if a.Banned {
		if a.BanReason != "" {
			out.BanReason = &a.BanReason
		}
		out.BanExpires = edge.OptionalTime(a.BanExpires)
	}
	return out
}

// BackendUserOutput is one user.
type BackendUserOutput struct {
	Body BackendUserJSON
}

// backendUserOutput answers u, which the use case has just answered the
// caller, with its passkey count.
func (s *API) backendUserOutput(ctx context.Context, u *domain.User) (*BackendUserOutput, error) {
	n, err := s.Factors.PasskeysOf(ctx, u)
	if err != nil {
		return nil, err
	}
	linked, err := s.LinkedAccounts.Linked(ctx, u.ID())
	if err != nil {
		return nil, err
	}
	return &BackendUserOutput{Body: backendUserJSON(u, n, linked)}, nil
}

// BackendCreateUserInput creates a user.
type BackendCreateUserInput struct {
	Body struct {
		Email           string           `json:"email" maxLength:"254" doc:"The address; stored lower-cased, unique across users." example:"ada@example.com"`
		Name            string           `json:"name" maxLength:"256" doc:"Display name, 1 to 256 characters." example:"Ada Lovelace"`
		Password        string           `json:"password,omitempty" maxLength:"4096" doc:"Optional; the password policy applies. Without one the user signs in after a password reset."`
		EmailVerified   bool             `json:"emailVerified,omitempty" doc:"Mark the address verified (default false)."`
		Image           string           `json:"image,omitempty" maxLength:"2048" doc:"Avatar URL: an absolute http or https URL."`
		PublicMetadata  UserMetadataJSON `json:"publicMetadata,omitempty"`
		PrivateMetadata UserMetadataJSON `json:"privateMetadata,omitempty"`
	}
}

func (s *API) backendCreateUser(ctx context.Context, in *BackendCreateUserInput) (*BackendUserOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeUsersWrite)
	if err != nil {
		return nil, err
	}
	b := in.Body
	u, err := s.Administration.CreateUser(ctx, req, admin.CreateUser{Email: b.Email, Name: b.Name, Password: b.Password,
		EmailVerified: b.EmailVerified, Image: b.Image, PublicMetadata: b.PublicMetadata.bytes(), PrivateMetadata: b.PrivateMetadata.bytes()})
	if err != nil {
		return nil, err
	}
	return s.backendUserOutput(ctx, u)
}

// BackendListUsersInput filters and pages users.
type BackendListUsersInput struct {
	Limit          int       `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size."`
	Cursor         string    `query:"cursor" maxLength:"512" doc:"nextCursor of the previous page."`
	Email          string    `query:"email" maxLength:"254" doc:"Only the user with this address, in any case: a lookup by address is a page of at most one user." example:"ada@example.com"`
	EmailContains  string    `query:"emailContains" maxLength:"254" doc:"Only addresses containing this text, in any case; % and _ are plain characters."`
	NameContains   string    `query:"nameContains" maxLength:"256" doc:"Only names containing this text, in any case; % and _ are plain characters."`
	Banned         string    `query:"banned" enum:"true,false" doc:"Only banned users (true) or only the others (false)."`
	OrganizationID string    `query:"organizationId" maxLength:"128" doc:"Only members of this organization (none when it does not exist)."`
	CreatedAfter   time.Time `query:"createdAfter" doc:"Only users created strictly after this time (RFC 3339)."`
	CreatedBefore  time.Time `query:"createdBefore" doc:"Only users created strictly before this time (RFC 3339)."`
}

// BackendUserListOutput is a page of users, newest first.
type BackendUserListOutput struct {
	Body struct {
		Data       []BackendUserJSON `json:"data" nullable:"false"`
		NextCursor *string           `json:"nextCursor" nullable:"true" doc:"Pass as cursor for the next page; null on the last."`
	}
}

func (s *API) backendListUsers(ctx context.Context, in *BackendListUsersInput) (*BackendUserListOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeUsersRead)
	if err != nil {
		return nil, err
	}
	q := admin.ListUsersPage{Limit: in.Limit, Cursor: in.Cursor, Email: in.Email, EmailContains: in.EmailContains,
		NameContains: in.NameContains, OrganizationID: domain.OrganizationID(in.OrganizationID),
		CreatedAfter: in.CreatedAfter, CreatedBefore: in.CreatedBefore}
	if in.Banned != "" {
		banned := in.Banned == "true"
		q.Banned = &banned
	}
	page, err := s.Administration.PageUsers(ctx, req, q)
	if err != nil {
		return nil, err
	}
	ids := make([]domain.UserID, len(page.Users))
	for i, u := range page.Users {
		ids[i] = u.ID()
	}
	linked, err := s.LinkedAccounts.LinkedOfUsers(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := &BackendUserListOutput{}
	out.Body.Data = make([]BackendUserJSON, len(page.Users))
	for i, u := range page.Users {
		out.Body.Data[i] = backendUserJSON(u, page.Passkeys[i], linked[u.ID()])
	}
	if page.NextCursor != "" {
		out.Body.NextCursor = &page.NextCursor
	}
	return out, nil
}

// BackendUserIDInput names a user in the path.
type BackendUserIDInput struct {
	ID string `path:"id" minLength:"1" maxLength:"128" doc:"The user's id."`
}

func (s *API) backendGetUser(ctx context.Context, in *BackendUserIDInput) (*BackendUserOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeUsersRead)
	if err != nil {
		return nil, err
	}
	u, err := s.Factors.GetUser(ctx, req, domain.UserID(in.ID))
	if err != nil {
		return nil, err
	}
	linked, err := s.LinkedAccounts.LinkedFor(ctx, req, u.User.ID())
	if err != nil {
		return nil, err
	}
	return &BackendUserOutput{Body: backendUserJSON(u.User, u.Passkeys, linked)}, nil
}

// BackendUpdateUserInput changes a user. Only the body's fields may be
// sent: any other (role, banned, password, id, createdAt…) is refused, named.
type BackendUpdateUserInput struct {
	ID   string `path:"id" minLength:"1" maxLength:"128" doc:"The user's id."`
	Body BackendUserPatchBody
}

// BackendUserPatchBody is what a trusted backend may change on a user.
type BackendUserPatchBody struct {
	Name            *string          `json:"name,omitempty" nullable:"false" maxLength:"256" doc:"Display name, 1 to 256 characters."`
	Email           *string          `json:"email,omitempty" nullable:"false" maxLength:"254" doc:"A new address, unverified unless emailVerified is true too; 409 when another user has it."`
	EmailVerified   *bool            `json:"emailVerified,omitempty" nullable:"false" doc:"Mark the address verified or not."`
	Image           *string          `json:"image,omitempty" nullable:"true" maxLength:"2048" doc:"Avatar URL (an absolute http or https URL); empty or null removes it."`
	PublicMetadata  UserMetadataJSON `json:"publicMetadata,omitempty" doc:"Replaces the public metadata; {} empties it."`
	PrivateMetadata UserMetadataJSON `json:"privateMetadata,omitempty" doc:"Replaces the private metadata; {} empties it."`
	// nulls are the properties sent as null, which the schema lets through
	// as if absent.
	nulls []string
}

// UnmarshalJSON decodes the body and notes the properties sent as null.
func (b *BackendUserPatchBody) UnmarshalJSON(data []byte) error {
	type plain BackendUserPatchBody
	if err := json.Unmarshal(data, (*plain)(b)); err != nil {
		return err
	}
	var props map[string]json.RawMessage
	if err := json.Unmarshal(data, &props); err != nil {
		return err
	}
	for k, v := range props {
		if string(bytes.TrimSpace(v)) == "null" {
			b.nulls = append(b.nulls, k)
		}
	}
	slices.Sort(b.nulls)
	return nil
}

// patch returns the change asked for: a null image removes it; any other
// null is refused, named.
func (b BackendUserPatchBody) patch() (admin.AdminUserPatch, error) {
	p := admin.AdminUserPatch{Name: b.Name, Email: b.Email, EmailVerified: b.EmailVerified, Image: b.Image,
		PublicMetadata: b.PublicMetadata.bytes(), PrivateMetadata: b.PrivateMetadata.bytes()}
	var bad []domain.FieldViolation
	for _, k := range b.nulls {
		switch strings.ToLower(k) {
		case "image":
			p.Image = new(string)
		case "publicmetadata", "privatemetadata":
			// Refused by the use case, which checks the object.
		default:
			bad = append(bad, domain.FieldViolation{Field: "body." + k, Message: "must not be null"})
		}
	}
	if len(bad) > 0 {
		return p, domain.Invalid("request.invalid", "The request is malformed.", bad...)
	}
	return p, nil
}

func (s *API) backendUpdateUser(ctx context.Context, in *BackendUpdateUserInput) (*BackendUserOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeUsersWrite)
	if err != nil {
		return nil, err
	}
	patch, err := in.Body.patch()
	if err != nil {
		return nil, err
	}
	u, err := s.Administration.UpdateUser(ctx, req, domain.UserID(in.ID), patch)
	if err != nil {
		return nil, err
	}
	return s.backendUserOutput(ctx, u)
}

func (s *API) backendDeleteUser(ctx context.Context, in *BackendUserIDInput) (*edge.NoContentOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeUsersWrite)
	if err != nil {
		return nil, err
	}
	if err := s.Administration.RemoveUser(ctx, req, domain.UserID(in.ID)); err != nil {
		return nil, err
	}
	return &edge.NoContentOutput{Status: http.StatusNoContent}, nil
}

// BackendBanUserInput bans a user.
type BackendBanUserInput struct {
	ID   string `path:"id" minLength:"1" maxLength:"128" doc:"The user's id."`
	Body *struct {
		Reason           string `json:"reason,omitempty" maxLength:"1024" doc:"Why, kept with the ban." example:"spam"`
		ExpiresInSeconds int64  `json:"expiresInSeconds,omitempty" minimum:"1" maximum:"315360000" doc:"How long the ban lasts; absent: until unbanned." example:"86400"`
	}
}

func (s *API) backendBanUser(ctx context.Context, in *BackendBanUserInput) (*BackendUserOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeUsersWrite)
	if err != nil {
		return nil, err
	}
	var reason string
	var expiresIn time.Duration
	if b := in.Body; b != nil {
		reason, expiresIn = b.Reason, time.Duration(b.ExpiresInSeconds)*time.Second
	}
	u, err := s.Administration.BanUser(ctx, req, domain.UserID(in.ID), reason, expiresIn)
	if err != nil {
		return nil, err
	}
	return s.backendUserOutput(ctx, u)
}

func (s *API) backendUnbanUser(ctx context.Context, in *BackendUserIDInput) (*BackendUserOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeUsersWrite)
	if err != nil {
		return nil, err
	}
	u, err := s.Administration.UnbanUser(ctx, req, domain.UserID(in.ID))
	if err != nil {
		return nil, err
	}
	return s.backendUserOutput(ctx, u)
}

func (s *API) backendRevokeUserSessions(ctx context.Context, in *BackendUserIDInput) (*edge.NoContentOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeUsersWrite)
	if err != nil {
		return nil, err
	}
	if err := s.Administration.RevokeUserSessions(ctx, req, domain.UserID(in.ID)); err != nil {
		return nil, err
	}
	return &edge.NoContentOutput{Status: http.StatusNoContent}, nil
}

func (s *API) backendResetUserFactors(ctx context.Context, in *BackendUserIDInput) (*edge.NoContentOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeUsersWrite)
	if err != nil {
		return nil, err
	}
	if err := s.Factors.ResetFactors(ctx, req, domain.UserID(in.ID)); err != nil {
		return nil, err
	}
	return &edge.NoContentOutput{Status: http.StatusNoContent}, nil
}

// BackendLinkedAccountInput names one of a user's linked accounts.
type BackendLinkedAccountInput struct {
	ID        string `path:"id" minLength:"1" maxLength:"128" doc:"The user's id."`
	AccountID string `path:"accountId" minLength:"1" maxLength:"128" doc:"The linked account's id."`
}

func (s *API) backendUnlinkAccount(ctx context.Context, in *BackendLinkedAccountInput) (*edge.NoContentOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeUsersWrite)
	if err != nil {
		return nil, err
	}
	if err := s.LinkedAccounts.UnlinkFor(ctx, req, domain.UserID(in.ID), in.AccountID); err != nil {
		return nil, err
	}
	return &edge.NoContentOutput{Status: http.StatusNoContent}, nil
}

// BackendSetPasswordInput sets a user's password.
type BackendSetPasswordInput struct {
	ID   string `path:"id" minLength:"1" maxLength:"128" doc:"The user's id."`
	Body struct {
		Password string `json:"password" maxLength:"4096" doc:"The new password; the password policy applies."`
	}
}

func (s *API) backendSetUserPassword(ctx context.Context, in *BackendSetPasswordInput) (*edge.NoContentOutput, error) {
	req, err := s.trustedRequest(ctx, domain.ScopeUsersWrite)
	if err != nil {
		return nil, err
	}
	if err := s.Administration.SetUserPassword(ctx, req, domain.UserID(in.ID), in.Body.Password); err != nil {
		return nil, err
	}
	return &edge.NoContentOutput{Status: http.StatusNoContent}, nil
}

// addBackendUserRoutes registers the trusted user routes (/api/users).
func (s *API) AddBackendUserRoutes() {
	type op = huma.Operation
	const tag = "Users"
	read, write := domain.ScopeUsersRead, domain.ScopeUsersWrite
	const audited = " Audited with the service key as the actor."
	registerTrusted(s, write, op{OperationID: "createUser", Method: http.MethodPost, Path: "/api/users", Tags: []string{tag},
		Summary: "Create a user", DefaultStatus: http.StatusCreated, Errors: []int{http.StatusConflict},
		Description: "Creates a user with an address, a name and, optionally, a password (the framework's password policy applies: 400 naming " +
			"body.password), a verified address, an avatar and public and private metadata (JSON objects of at most 8 KiB each: 400 naming the field). " +
			"409 user.email_taken when another user has the address, in any case. A user created with a password can sign in at once through " +
			"/api/auth/sign-in/email." + audited}, s.backendCreateUser)
	registerTrusted(s, read, op{OperationID: "listUsers", Method: http.MethodGet, Path: "/api/users", Tags: []string{tag},
		Summary: "List users",
		Description: "Users newest first (by creation, ties by id), limit at a time (default 20, at most 100), paged with nextCursor: each page " +
			"costs the same however deep, and users created while paging do not shift the pages that follow. Filters combine: email (exact, in any " +
			"case: a lookup by address, one user or none), emailContains and nameContains (text within, in any case), banned, organizationId " +
			"(members of it), createdAfter and createdBefore (exclusive). A malformed cursor, limit or filter is 400 naming it (query.cursor…)."},
		s.backendListUsers)
	registerTrusted(s, read, op{OperationID: "getUser", Method: http.MethodGet, Path: "/api/users/{id}", Tags: []string{tag},
		Summary: "Get a user", Errors: []int{http.StatusNotFound},
		Description: "The user with its metadata. 404 user.not_found for an unknown id."}, s.backendGetUser)
	registerTrusted(s, write, op{OperationID: "updateUser", Method: http.MethodPatch, Path: "/api/users/{id}", Tags: []string{tag},
		Summary: "Update a user", Errors: []int{http.StatusNotFound, http.StatusConflict},
		Description: "Changes name, email, emailVerified, image, publicMetadata or privateMetadata; fields not sent stay as they are, and " +
			"metadata sent replaces the whole object. Any other field (role, banned, password, id, createdAt…) is refused with 400 naming it: bans " +
			"and passwords have their own routes, and platform roles are for administrators. A new address is unverified unless emailVerified is " +
			"true in the same request. 400 user.no_changes for an empty body, 404 user.not_found, 409 user.email_taken." + audited},
		s.backendUpdateUser)
	registerTrusted(s, write, op{OperationID: "deleteUser", Method: http.MethodDelete, Path: "/api/users/{id}", Tags: []string{tag},
		Summary: "Delete a user", DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusNotFound},
		Description: "Deletes the user with their sessions, password, pending links and organization memberships. 404 user.not_found." + audited},
		s.backendDeleteUser)
	registerTrusted(s, write, op{OperationID: "banUser", Method: http.MethodPost, Path: "/api/users/{id}/ban", Tags: []string{tag},
		Summary: "Ban a user", Errors: []int{http.StatusNotFound},
		Description: "Bans the user, with an optional reason, until expiresInSeconds from now or until unbanned, and ends all their sessions: " +
			"a banned user cannot sign in. Answers the user. 404 user.not_found." + audited}, s.backendBanUser)
	registerTrusted(s, write, op{OperationID: "unbanUser", Method: http.MethodPost, Path: "/api/users/{id}/unban", Tags: []string{tag},
		Summary: "Unban a user", Errors: []int{http.StatusNotFound},
		Description: "Lifts the user's ban (a no-op for a user who is not banned). Answers the user. 404 user.not_found." + audited},
		s.backendUnbanUser)
	registerTrusted(s, write, op{OperationID: "revokeUserSessions", Method: http.MethodDelete, Path: "/api/users/{id}/sessions", Tags: []string{tag},
		Summary: "Revoke a user's sessions", DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusNotFound},
		Description: "Ends every session of the user, on every device, at the next request. 404 user.not_found." + audited},
		s.backendRevokeUserSessions)
	registerTrusted(s, write, op{OperationID: "resetUserFactors", Method: http.MethodPost, Path: "/api/users/{id}/factors/reset", Tags: []string{tag},
		Summary: "Reset a user's second factors", DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusNotFound},
		Description: "For a user who lost their authenticator or passkeys: removes their TOTP factor, backup codes, passkeys, pending " +
			"second-factor challenges and trusted browsers, turns twoFactorEnabled off, ends all their sessions, and mails them that it " +
			"happened. They then sign in with their password alone and enrol again. Idempotent: a user without factors has their sessions " +
			"ended and is not mailed. 404 user.not_found." + audited}, s.backendResetUserFactors)
	registerTrusted(s, write, op{OperationID: "unlinkUserAccount", Method: http.MethodDelete, Path: "/api/users/{id}/linked-accounts/{accountId}", Tags: []string{tag},
		Summary: "Unlink a user's account", DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusNotFound, http.StatusConflict},
		Description: "Removes one of the user's linked accounts (linkedAccounts[].id) with its upstream tokens. Their last way to sign in (no password, " +
			"no passkey, no other linked account) is refused: 409 linked_account.last. 404 linked_account.not_found." + audited}, s.backendUnlinkAccount)
	registerTrusted(s, write, op{OperationID: "setUserPassword", Method: http.MethodPut, Path: "/api/users/{id}/password", Tags: []string{tag},
		Summary: "Set a user's password", DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusNotFound},
		Description: "Sets the user's password, replacing any, under the framework's password policy (400 naming body.password), and ends " +
			"all their sessions. 404 user.not_found." + audited}, s.backendSetUserPassword)
}
