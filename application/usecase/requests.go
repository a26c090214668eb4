package usecase

import (
	"errors"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// AdminSettings are the rules of platform administration.
type AdminSettings struct {
	// Admins are the users who administer the platform beyond the admin role.
	Admins domain.PlatformAdmins
	// ImpersonationTTL is how long an impersonation session lasts (default 1 hour).
	ImpersonationTTL time.Duration
	// RequireMFA refuses the administration routes to a platform
	// administrator without a second factor (two-factor or a passkey).
	RequireMFA bool
}

// Permission is one access-control check: the permission a signed-in user
// needs, with the code refusing it, and the scope a service key needs for
// the same operation ("" for one no key may perform).
type Permission struct {
	Perms   domain.Permissions
	Scope   domain.Scope
	Code    string
	Message string
}

func Perm(resource, action string, scope domain.Scope, code, message string) Permission {
	return Permission{Perms: domain.Permissions{resource: {action}}, Scope: scope, Code: code, Message: message}
}

// AdminRequest is who asks and from where: the signed-in principal and the
// request's identity for the audit log.
type AdminRequest struct {
	Principal Principal
	RequestID string
	IPAddress string
}

// Actor is the audit log's view of the request.
func (r AdminRequest) Actor() Actor {
	return UserActor(r.Principal.User.ID(), r.RequestID, r.IPAddress)
}

// ErrBannedUser refuses a banned user, at sign-in and in administration.
var ErrBannedUser = domain.NewError(domain.KindForbidden, "user.banned", "You have been banned from this application. Please contact support if you believe this is an error.")

func Forbidden(code, message string) error {
	return domain.NewError(domain.KindForbidden, code, message)
}

// OrgRequest is a signed-in user's request about organizations.
type OrgRequest struct {
	Principal Principal
	RequestID string
	IPAddress string
}

// Actor is the audit log's view of the request.
func (r OrgRequest) Actor() Actor { return UserActor(r.Principal.User.ID(), r.RequestID, r.IPAddress) }

// KeyRequest is an administrator's (or, with a nil Principal, the command
// line's) request about service keys.
type KeyRequest struct {
	Principal *Principal
	Actor     Actor
}

// ErrAdminUserNotFound answers an operator (a platform administrator or a
// service key) whose target user does not exist.
var ErrAdminUserNotFound = domain.NewError(domain.KindNotFound, "admin.user_not_found", "User not found")

// AdminUserErr turns a store's error about an operator's target user into
// the operator's answer: ErrAdminUserNotFound, ErrUserExists, or err.
func AdminUserErr(err error) error {
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return ErrAdminUserNotFound
	case errors.Is(err, domain.ErrConflict):
		return ErrUserExists
	}
	return err
}
