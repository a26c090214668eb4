package domain

import "time"

// VerificationPurpose says what a one-time link proves.
type VerificationPurpose string

// The purposes of one-time links.
const (
	// PurposeVerifyEmail proves the user owns their address.
	PurposeVerifyEmail VerificationPurpose = "verify-email"
	// PurposeChangeEmail proves the user owns the new address they asked for.
	PurposeChangeEmail VerificationPurpose = "change-email"
	// PurposeResetPassword lets the owner of the address set a new password.
	PurposeResetPassword VerificationPurpose = "reset-password"
	// PurposeDeleteUser confirms that the user wants their account deleted.
	PurposeDeleteUser VerificationPurpose = "delete-user"
	// PurposeTrustDevice lets a browser that answered a second factor skip
	// it at its user's next sign-ins (the trust_device cookie). It is used
	// once and replaced at each such sign-in.
	PurposeTrustDevice VerificationPurpose = "trust-device"
)

// Verification is an outstanding one-time link. Only the hash of its token is
// kept; the token itself travels once, in the mail.
type Verification struct {
	id        string
	purpose   VerificationPurpose
	tokenHash TokenHash
	userID    UserID
	email     Email
	expiresAt time.Time
	createdAt time.Time
}

// NewVerification records a link for userID and email (the user's address,
// or the new one for an e-mail change) valid for ttl.
func NewVerification(id string, purpose VerificationPurpose, token TokenHash, userID UserID, email Email, ttl time.Duration, now time.Time) *Verification {
	now = Timestamp(now)
	return &Verification{id: id, purpose: purpose, tokenHash: token, userID: userID, email: email,
		expiresAt: Timestamp(now.Add(ttl)), createdAt: now}
}

// RehydrateVerification rebuilds a stored verification. Only storage adapters call it.
func RehydrateVerification(id string, purpose VerificationPurpose, token TokenHash, userID UserID, email Email, expiresAt, createdAt time.Time) *Verification {
	return &Verification{id: id, purpose: purpose, tokenHash: token, userID: userID, email: email,
		expiresAt: Timestamp(expiresAt), createdAt: Timestamp(createdAt)}
}

// ID returns the identifier.
func (v *Verification) ID() string { return v.id }

// Purpose returns what the link proves.
func (v *Verification) Purpose() VerificationPurpose { return v.purpose }

// TokenHash returns the hash of the link's token.
func (v *Verification) TokenHash() TokenHash { return v.tokenHash }

// UserID returns whose link it is.
func (v *Verification) UserID() UserID { return v.userID }

// Email returns the address the link was sent to.
func (v *Verification) Email() Email { return v.email }

// ExpiresAt returns when the link stops working.
func (v *Verification) ExpiresAt() time.Time { return v.expiresAt }

// CreatedAt returns when the link was made.
func (v *Verification) CreatedAt() time.Time { return v.createdAt }

// IsExpired reports whether the link has stopped working at now.
func (v *Verification) IsExpired(now time.Time) bool { return !now.Before(v.expiresAt) }

// The errors the stores return for this aggregate, created once so that
// every store answers each condition with the same kind, code and message.
var (
	ErrVerificationNotFound = NotFound("verification.not_found", "link")
	ErrVerificationExists   = NewError(KindConflict, "verification.exists", "a link with this id or token already exists")
)
