package ports

import (
	"fmt"

	"github.com/gatehouse/gatehouse/domain"
)

// The errors the stores return for their conditions, created here once so
// that the memory and SQL stores answer each with the same kind, code and
// message. The organization store's are in organization_errors.go.
var (
	ErrUserNotFound         = domain.NotFound("user.not_found", "user")
	ErrUserExists           = domain.NewError(domain.KindConflict, "user.exists", "a user with this id or e-mail already exists")
	ErrCredentialNotFound   = domain.NotFound("credential.not_found", "credential")
	ErrSessionNotFound      = domain.NotFound("session.not_found", "session")
	ErrSessionExists        = domain.NewError(domain.KindConflict, "session.exists", "a session with this id or token already exists")
	ErrVerificationNotFound = domain.NotFound("verification.not_found", "link")
	ErrVerificationExists   = domain.NewError(domain.KindConflict, "verification.exists", "a link with this id or token already exists")
	ErrServiceKeyNotFound   = domain.NotFound("service_key.not_found", "service key")
	ErrServiceKeyExists     = domain.NewError(domain.KindConflict, "service_key.exists", "a service key with this id or secret already exists")
	ErrAuditEntryExists     = domain.NewError(domain.KindConflict, "audit.exists", "an audit entry with this id already exists")
	ErrDomainExists         = domain.NewError(domain.KindConflict, "domain.exists", "a domain with this id already exists")
	ErrSigningKeyExists     = domain.NewError(domain.KindConflict, "signing_key.exists", "a signing key with this id already exists")
	ErrOutboxMessageExists  = domain.NewError(domain.KindConflict, "outbox.exists", "an outbox message with this id already exists")
	// ErrActiveOrganizationNotFound is a session made active in an
	// organization that does not exist.
	ErrActiveOrganizationNotFound = domain.NotFound("organization.not_found", "organization")

	ErrOAuthClientExists       = domain.NewError(domain.KindConflict, "oauth_client.exists", "an OAuth client with this id already exists")
	ErrOAuthCodeExists         = domain.NewError(domain.KindConflict, "oauth_code.exists", "an authorization code with this hash already exists")
	ErrOAuthGrantExists        = domain.NewError(domain.KindConflict, "oauth_grant.exists", "a grant or refresh token with this key already exists")
	ErrOAuthRefreshTokenExists = domain.NewError(domain.KindConflict, "oauth_refresh_token.exists", "a refresh token with this hash already exists")
	// ErrCodeConsumed is ConsumeCode of a code already consumed.
	ErrCodeConsumed = domain.NewError(domain.KindConflict, "oauth_code.consumed", "The authorization code was already used")
	// ErrRefreshTokenUsed is RotateRefreshToken of a token already rotated.
	ErrRefreshTokenUsed = domain.NewError(domain.KindConflict, "oauth_refresh_token.used", "The refresh token was already used")
)

// UserQueryError reports a condition or sort of a UserQuery that a store
// does not support (domain.KindInvalid). The offending names go in the
// cause, which is logged and never sent.
func UserQueryError(format string, args ...any) error {
	return &domain.Error{Kind: domain.KindInvalid, Code: "user.query_unsupported",
		Message: "unsupported user query", Err: fmt.Errorf(format, args...)}
}
