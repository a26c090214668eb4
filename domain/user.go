package domain

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// UserID identifies a User.
type UserID string

// String returns the identifier.
func (id UserID) String() string { return string(id) }

// MaxNameLength bounds a display name, in characters.
const MaxNameLength = 256

// User is a person who can sign in. Fields are unexported so that every change
// goes through a method that keeps the invariants; adapters rebuild stored
// users with RehydrateUser.
type User struct {
	id            UserID
	name          string
	email         Email
	emailVerified bool
	image         string
	access        UserAccess
	metadata      UserMetadata
	// twoFactorOn is set by the first accepted TOTP code and cleared when
	// two-factor is disabled.
	twoFactorOn bool
	createdAt   time.Time
	updatedAt   time.Time
}

// UserAccess is what platform administration sets on a user: their platform
// roles and whether they are banned.
type UserAccess struct {
	// Roles are the user's platform roles; empty means DefaultPlatformRole.
	Roles []PlatformRole
	// Banned users cannot sign in; their sessions were revoked by the ban.
	Banned    bool
	BanReason string
	// BanExpires is when a ban lifts by itself; zero means never.
	BanExpires time.Time
}

// NewUser returns a new, unverified user created at now.
func NewUser(id UserID, name string, email Email, now time.Time) (*User, error) {
	if id == "" {
		return nil, Internal("domain.NewUser", errEmptyID)
	}
	if email == "" {
		return nil, Invalid("email.invalid", "Invalid email", FieldViolation{Field: "email", Message: "is required"})
	}
	now = Timestamp(now)
	u := &User{id: id, email: email, access: UserAccess{Roles: []PlatformRole{DefaultPlatformRole}}, createdAt: now, updatedAt: now}
	if err := u.Rename(name, now); err != nil {
		return nil, err
	}
	return u, nil
}

// RehydrateUser rebuilds a stored user. Only storage adapters call it; it does
// not validate, because what was stored was valid when it was written.
func RehydrateUser(id UserID, name string, email Email, emailVerified bool, image string, access UserAccess, metadata UserMetadata, createdAt, updatedAt time.Time) *User {
	if len(access.Roles) == 0 {
		access.Roles = []PlatformRole{DefaultPlatformRole}
	}
	access.Roles = append([]PlatformRole(nil), access.Roles...)
	if !access.BanExpires.IsZero() {
		access.BanExpires = Timestamp(access.BanExpires)
	}
	return &User{id: id, name: name, email: email, emailVerified: emailVerified, image: image, access: access, metadata: metadata,
		createdAt: Timestamp(createdAt), updatedAt: Timestamp(updatedAt)}
}

// ID returns the user's identifier.
func (u *User) ID() UserID { return u.id }

// Name returns the display name.
func (u *User) Name() string { return u.name }

// Email returns the normalised e-mail address.
func (u *User) Email() Email { return u.email }

// EmailVerified reports whether the user proved they own the address.
func (u *User) EmailVerified() bool { return u.emailVerified }

// TwoFactorEnabled reports whether sign-in asks this user for a second
// factor.
func (u *User) TwoFactorEnabled() bool { return u.twoFactorOn }

// SetTwoFactorEnabled turns the second factor of sign-in on or off.
func (u *User) SetTwoFactorEnabled(on bool, now time.Time) {
	u.twoFactorOn = on
	u.updatedAt = Timestamp(now)
}

// WithTwoFactor returns u with its stored two-factor flag, as adapters
// rehydrate it (RehydrateUser leaves it off).
func (u *User) WithTwoFactor(on bool) *User {
	u.twoFactorOn = on
	return u
}

// Image returns the avatar URL, or "".
func (u *User) Image() string { return u.image }

// Metadata returns the user's public and private metadata.
func (u *User) Metadata() UserMetadata { return u.metadata }

// SetPublicMetadata replaces the user's public metadata.
func (u *User) SetPublicMetadata(m Metadata, now time.Time) {
	u.metadata.Public = m
	u.updatedAt = Timestamp(now)
}

// SetPrivateMetadata replaces the user's private metadata.
func (u *User) SetPrivateMetadata(m Metadata, now time.Time) {
	u.metadata.Private = m
	u.updatedAt = Timestamp(now)
}

// CreatedAt returns when the user was created.
func (u *User) CreatedAt() time.Time { return u.createdAt }

// UpdatedAt returns when the user was last changed.
func (u *User) UpdatedAt() time.Time { return u.updatedAt }

// Rename sets the display name: trimmed, 1 to MaxNameLength characters, valid
// UTF-8, without direction controls (IsBidiControl).
func (u *User) Rename(name string, now time.Time) error {
	name = strings.TrimSpace(name)
	if name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxNameLength {
		return Invalid("user.invalid_name", "Invalid name", FieldViolation{Field: "name", Message: "must be 1 to 256 characters"})
	}
	if HasBidiControl(name) {
		return Invalid("user.invalid_name", "Invalid name", FieldViolation{Field: "name", Message: bidiMessage})
	}
	u.name = name
	u.updatedAt = Timestamp(now)
	return nil
}

// CodeUserInvalidImage: a user's image is not an http or https URL.
const CodeUserInvalidImage = "user.invalid_image"

// SetImage sets the avatar URL, or clears it with "": an absolute http or
// https URL of at most MaxPictureURLLength bytes (checkPictureURL), or an
// error of kind invalid naming the field image.
func (u *User) SetImage(image string, now time.Time) error {
	image, err := checkPictureURL(image, CodeUserInvalidImage, "image")
	if err != nil {
		return err
	}
	u.image = image
	u.updatedAt = Timestamp(now)
	return nil
}

// MarkEmailVerified records that the user proved ownership of their address.
func (u *User) MarkEmailVerified(now time.Time) {
	u.emailVerified = true
	u.updatedAt = Timestamp(now)
}

type constError string

func (e constError) Error() string { return string(e) }

const errEmptyID = constError("empty identifier")

// ChangeEmail moves the account to a new address. verified says whether the
// owner of the new address has proved it (by following a link sent there).
func (u *User) ChangeEmail(email Email, verified bool, now time.Time) {
	u.email = email
	u.emailVerified = verified
	u.updatedAt = Timestamp(now)
}

// Access returns the user's platform roles and ban, as a copy.
func (u *User) Access() UserAccess {
	a := u.access
	a.Roles = append([]PlatformRole(nil), a.Roles...)
	return a
}

// Roles returns the user's platform roles.
func (u *User) Roles() []PlatformRole { return append([]PlatformRole(nil), u.access.Roles...) }

// SetRoles replaces the user's platform roles. Every role must be known.
func (u *User) SetRoles(roles []PlatformRole, now time.Time) error {
	clean, err := ParsePlatformRoles(roles)
	if err != nil {
		return err
	}
	u.access.Roles = clean
	u.updatedAt = Timestamp(now)
	return nil
}

// IsBanned reports whether the user is banned at now: a ban whose expiry has
// passed no longer counts.
func (u *User) IsBanned(now time.Time) bool {
	return u.access.Banned && (u.access.BanExpires.IsZero() || now.Before(u.access.BanExpires))
}

// MaxBanReasonLength bounds a ban reason, in characters.
const MaxBanReasonLength = 1024

// Ban bans the user with a reason, until expires (zero: until unbanned).
func (u *User) Ban(reason string, expires time.Time, now time.Time) error {
	reason = strings.TrimSpace(reason)
	if !utf8.ValidString(reason) || utf8.RuneCountInString(reason) > MaxBanReasonLength {
		return Invalid("user.invalid_ban_reason", "Invalid ban reason", FieldViolation{Field: "banReason", Message: "must be at most 1024 characters"})
	}
	if HasBidiControl(reason) {
		return Invalid("user.invalid_ban_reason", "Invalid ban reason", FieldViolation{Field: "banReason", Message: bidiMessage})
	}
	if !expires.IsZero() && !expires.After(now) {
		return Invalid("user.invalid_ban_expiry", "Invalid ban expiry", FieldViolation{Field: "banExpiresIn", Message: "must be in the future"})
	}
	u.access.Banned = true
	u.access.BanReason = reason
	u.access.BanExpires = time.Time{}
	if !expires.IsZero() {
		u.access.BanExpires = Timestamp(expires)
	}
	u.updatedAt = Timestamp(now)
	return nil
}

// Unban lifts the user's ban.
func (u *User) Unban(now time.Time) {
	u.access.Banned = false
	u.access.BanReason = ""
	u.access.BanExpires = time.Time{}
	u.updatedAt = Timestamp(now)
}

// Clone returns a copy of u that shares nothing with it that a change to
// one could reach through the other.
func (u *User) Clone() *User {
	c := *u
	c.access.Roles = slices.Clone(u.access.Roles)
	return &c
}

// The errors the stores return for this aggregate, created once so that
// every store answers each condition with the same kind, code and message.
var (
	ErrUserNotFound = NotFound("user.not_found", "user")
	ErrUserExists   = NewError(KindConflict, "user.exists", "a user with this id or e-mail already exists")
)
