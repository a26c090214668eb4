package domain

import (
	"slices"
	"strings"
)

// Permissions are actions on resources, as Better Auth's access control
// writes them: {"user": ["ban", "list"], "session": ["revoke"]}.
type Permissions map[string][]string

// statements is a role table: role → resource → actions it grants.
type statements map[string]Permissions

// grants reports whether one of roles grants every requested action. An
// empty request is granted to nobody, so a malformed check never passes.
func (t statements) grants(roles []string, requested Permissions) bool {
	if len(requested) == 0 {
		return false
	}
	for _, role := range roles {
		if t.roleGrants(role, requested) {
			return true
		}
	}
	return false
}

func (t statements) roleGrants(role string, requested Permissions) bool {
	granted, ok := t[role]
	if !ok {
		return false
	}
	for resource, actions := range requested {
		if len(actions) == 0 {
			return false
		}
		for _, a := range actions {
			if !slices.Contains(granted[resource], a) {
				return false
			}
		}
	}
	return true
}

// PlatformRole is a role on the whole service (Better Auth's user.role).
type PlatformRole string

// The platform roles. Only these exist: setting another is refused.
const (
	PlatformRoleUser  PlatformRole = "user"
	PlatformRoleAdmin PlatformRole = "admin"
	// DefaultPlatformRole is every new user's role.
	DefaultPlatformRole = PlatformRoleUser
)

// platformStatements is the admin plugin's default access control.
var platformStatements = statements{
	string(PlatformRoleAdmin): {
		"user":    {"create", "list", "set-role", "ban", "impersonate", "delete", "set-password", "set-email", "get", "update"},
		"session": {"list", "revoke", "delete"},
	},
	string(PlatformRoleUser): {},
}

// ParsePlatformRoles checks, de-duplicates and trims roles, keeping their
// order. An unknown or empty role is an error.
func ParsePlatformRoles(roles []PlatformRole) ([]PlatformRole, error) {
	out := make([]PlatformRole, 0, len(roles))
	for _, r := range roles {
		r = PlatformRole(strings.TrimSpace(string(r)))
		if _, ok := platformStatements[string(r)]; !ok {
			return nil, NewError(KindInvalid, "role.unknown_value", "You are not allowed to set a non-existent role value")
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, Invalid("role.invalid_type", "Invalid role type", FieldViolation{Field: "role", Message: "must name at least one role"})
	}
	return out, nil
}

// JoinPlatformRoles writes roles as Better Auth stores them: comma-separated.
func JoinPlatformRoles(roles []PlatformRole) string {
	parts := make([]string, len(roles))
	for i, r := range roles {
		parts[i] = string(r)
	}
	return strings.Join(parts, ",")
}

// SplitPlatformRoles reads a comma-separated role list (unknown roles are
// kept, so nothing stored is silently lost; they grant nothing).
func SplitPlatformRoles(s string) []PlatformRole {
	var out []PlatformRole
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, PlatformRole(part))
		}
	}
	return out
}

// ErrNotPlatformAdmin refuses a signed-in user who is not a platform
// administrator an administration route outside the admin plugin.
var ErrNotPlatformAdmin = NewError(KindForbidden, "auth.not_platform_admin", "Only platform administrators may do this")

// PlatformAdmins says who administers the platform beyond the admin role:
// users whose id or verified address is configured.
type PlatformAdmins struct {
	UserIDs []UserID
	Emails  []Email
}

// IsAdmin reports whether u is a platform administrator: one of u's roles
// is admin, or u's id is configured, or u's verified address is.
func (a PlatformAdmins) IsAdmin(u *User) bool {
	if slices.Contains(u.access.Roles, PlatformRoleAdmin) || slices.Contains(a.UserIDs, u.id) {
		return true
	}
	return u.emailVerified && slices.Contains(a.Emails, u.email)
}

// Allows reports whether u may perform every requested action of the admin
// access control. Configured administrators hold the admin role's grants.
func (a PlatformAdmins) Allows(u *User, requested Permissions) bool {
	roles := make([]string, 0, len(u.access.Roles)+1)
	for _, r := range u.access.Roles {
		roles = append(roles, string(r))
	}
	if a.IsAdmin(u) {
		roles = append(roles, string(PlatformRoleAdmin))
	}
	return platformStatements.grants(roles, requested)
}

// OrgRole is a role in an organization.
type OrgRole string

// The organization roles of Better Auth's organization plugin.
const (
	OrgRoleOwner  OrgRole = "owner"
	OrgRoleAdmin  OrgRole = "admin"
	OrgRoleMember OrgRole = "member"
)

// orgStatements is the organization plugin's default access control.
var orgStatements = statements{
	string(OrgRoleOwner): {
		"organization": {"update", "delete"},
		"member":       {"create", "update", "delete"},
		"invitation":   {"create", "cancel"},
		"team":         {"create", "update", "delete"},
		"ac":           {"create", "read", "update", "delete"},
	},
	string(OrgRoleAdmin): {
		"organization": {"update"},
		"member":       {"create", "update", "delete"},
		"invitation":   {"create", "cancel"},
		"team":         {"create", "update", "delete"},
		"ac":           {"create", "read", "update", "delete"},
	},
	string(OrgRoleMember): {
		"ac": {"read"},
	},
}

// ParseOrgRoles checks, de-duplicates and trims roles. An unknown role is an
// error carrying Better Auth's ROLE_NOT_FOUND code.
func ParseOrgRoles(roles []string) ([]OrgRole, error) {
	out := make([]OrgRole, 0, len(roles))
	for _, r := range roles {
		r = strings.TrimSpace(r)
		if _, ok := orgStatements[r]; !ok {
			return nil, NewError(KindInvalid, "role.not_found", "Role not found")
		}
		if !slices.Contains(out, OrgRole(r)) {
			out = append(out, OrgRole(r))
		}
	}
	if len(out) == 0 {
		return nil, Invalid("role.not_found", "Role not found", FieldViolation{Field: "role", Message: "must name at least one role"})
	}
	return out, nil
}

// JoinOrgRoles writes roles comma-separated, as Better Auth stores them.
func JoinOrgRoles(roles []OrgRole) string {
	parts := make([]string, len(roles))
	for i, r := range roles {
		parts[i] = string(r)
	}
	return strings.Join(parts, ",")
}

// SplitOrgRoles reads a comma-separated role list.
func SplitOrgRoles(s string) []OrgRole {
	var out []OrgRole
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, OrgRole(part))
		}
	}
	return out
}

// OrgRolesAllow reports whether one of roles grants every requested action.
func OrgRolesAllow(roles []OrgRole, requested Permissions) bool {
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = string(r)
	}
	return orgStatements.grants(names, requested)
}
