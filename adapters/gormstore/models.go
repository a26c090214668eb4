package gormstore

import (
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// Row models mirror the migrated schema exactly; the schema-drift test holds
// them to it. Timestamps are never filled in by gorm: the domain sets them.

type userRow struct {
	ID            string    `gorm:"column:id;primaryKey;type:text;index:users_created_at_idx,priority:2"`
	Name          string    `gorm:"column:name;not null"`
	Email         string    `gorm:"column:email;not null;uniqueIndex:users_email_key"`
	EmailVerified bool      `gorm:"column:email_verified;not null"`
	Image         string    `gorm:"column:image;not null"`
	CreatedAt     time.Time `gorm:"column:created_at;not null;autoCreateTime:false;index:users_created_at_idx,priority:1"`
	UpdatedAt     time.Time `gorm:"column:updated_at;not null;autoUpdateTime:false"`
	// Role is the user's platform roles, comma-separated (domain.JoinPlatformRoles).
	Role      string `gorm:"column:role;not null"`
	Banned    bool   `gorm:"column:banned;not null"`
	BanReason string `gorm:"column:ban_reason;not null"`
	// BanExpires is NULL for a ban until lifted, and for a user not banned.
	BanExpires *time.Time `gorm:"column:ban_expires"`
	// PublicMetadata and PrivateMetadata are JSON objects: TEXT on SQLite,
	// jsonb on PostgreSQL.
	PublicMetadata  string `gorm:"column:public_metadata;not null"`
	PrivateMetadata string `gorm:"column:private_metadata;not null"`
	// TwoFactorEnabled is set by the first accepted TOTP code (00013).
	TwoFactorEnabled bool `gorm:"column:two_factor_enabled;not null"`
}

func (userRow) TableName() string { return "users" }

func userFromDomain(u *domain.User) userRow {
	a := u.Access()
	r := userRow{
		ID: string(u.ID()), Name: u.Name(), Email: string(u.Email()), EmailVerified: u.EmailVerified(),
		Image: u.Image(), CreatedAt: u.CreatedAt(), UpdatedAt: u.UpdatedAt(),
		Role: domain.JoinPlatformRoles(a.Roles), Banned: a.Banned, BanReason: a.BanReason,
		PublicMetadata: u.Metadata().Public.String(), PrivateMetadata: u.Metadata().Private.String(),
		TwoFactorEnabled: u.TwoFactorEnabled(),
	}
	if !a.BanExpires.IsZero() {
		r.BanExpires = &a.BanExpires
	}
	return r
}

func (r userRow) toDomain() *domain.User {
	a := domain.UserAccess{Roles: domain.SplitPlatformRoles(r.Role), Banned: r.Banned, BanReason: r.BanReason}
	if r.BanExpires != nil {
		a.BanExpires = *r.BanExpires
	}
	meta := domain.UserMetadata{Public: domain.RehydrateMetadata(r.PublicMetadata), Private: domain.RehydrateMetadata(r.PrivateMetadata)}
	return domain.RehydrateUser(domain.UserID(r.ID), r.Name, domain.Email(r.Email), r.EmailVerified, r.Image, a, meta, r.CreatedAt, r.UpdatedAt).
		WithTwoFactor(r.TwoFactorEnabled)
}

type sessionRow struct {
	ID         string    `gorm:"column:id;primaryKey;type:text"`
	UserID     string    `gorm:"column:user_id;not null;index:sessions_user_id_idx"`
	TokenHash  string    `gorm:"column:token_hash;not null;uniqueIndex:sessions_token_hash_key"`
	RememberMe bool      `gorm:"column:remember_me;not null"`
	IPAddress  string    `gorm:"column:ip_address;not null"`
	UserAgent  string    `gorm:"column:user_agent;not null"`
	ExpiresAt  time.Time `gorm:"column:expires_at;not null;index:sessions_expires_at_idx"`
	CreatedAt  time.Time `gorm:"column:created_at;not null;autoCreateTime:false"`
	UpdatedAt  time.Time `gorm:"column:updated_at;not null;autoUpdateTime:false"`
	// ActiveOrganizationID is NULL when the session works in no organization.
	ActiveOrganizationID *string `gorm:"column:active_organization_id;index:sessions_active_organization_id_idx"`
	// ImpersonatedBy is NULL unless an administrator acts through the session.
	ImpersonatedBy *string `gorm:"column:impersonated_by;index:sessions_impersonated_by_idx"`
	// AuthMethods are the RFC 8176 methods of the sign-in, space-separated.
	AuthMethods string `gorm:"column:auth_methods;not null"`
	// SecondFactorAt is NULL until a second factor is proven.
	SecondFactorAt *time.Time `gorm:"column:second_factor_at"`
}

func (sessionRow) TableName() string { return "sessions" }

func sessionFromDomain(s *domain.Session) sessionRow {
	return sessionRow{
		ID: string(s.ID()), UserID: string(s.UserID()), TokenHash: string(s.TokenHash()), RememberMe: s.RememberMe(),
		IPAddress: s.IPAddress(), UserAgent: s.UserAgent(),
		ExpiresAt: s.ExpiresAt(), CreatedAt: s.CreatedAt(), UpdatedAt: s.UpdatedAt(),
		ActiveOrganizationID: nullIfEmpty(string(s.ActiveOrganizationID())),
		ImpersonatedBy:       nullIfEmpty(string(s.ImpersonatedBy())),
		AuthMethods:          s.Authentication().EncodeMethods(),
		SecondFactorAt:       nullTime(s.Authentication().SecondFactorAt),
	}
}

func (r sessionRow) toDomain() *domain.Session {
	return domain.RehydrateSession(domain.SessionID(r.ID), domain.UserID(r.UserID), domain.TokenHash(r.TokenHash), r.RememberMe,
		r.IPAddress, r.UserAgent, domain.OrganizationID(emptyIfNull(r.ActiveOrganizationID)), domain.UserID(emptyIfNull(r.ImpersonatedBy)),
		r.ExpiresAt, r.CreatedAt, r.UpdatedAt,
		domain.Authentication{Methods: domain.DecodeMethods(r.AuthMethods), SecondFactorAt: fromNullTime(r.SecondFactorAt)})
}

// nullIfEmpty maps "" to NULL, for optional references: a foreign key holds
// NULL, never "", when it refers to nothing.
func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// emptyIfNull maps NULL to "".
func emptyIfNull(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

type credentialRow struct {
	UserID         string `gorm:"column:user_id;primaryKey;type:text"`
	Hash           string `gorm:"column:hash;not null"`
	FailedAttempts int    `gorm:"column:failed_attempts;not null"`
	// LockedUntil is NULL when the credential is not locked.
	LockedUntil *time.Time `gorm:"column:locked_until"`
	UpdatedAt   time.Time  `gorm:"column:updated_at;not null;autoUpdateTime:false"`
}

func (credentialRow) TableName() string { return "credentials" }

func credentialFromDomain(c *domain.Credential) credentialRow {
	r := credentialRow{UserID: string(c.UserID()), Hash: c.Hash(), FailedAttempts: c.FailedAttempts(), UpdatedAt: c.UpdatedAt()}
	if t := c.LockedUntil(); !t.IsZero() {
		r.LockedUntil = &t
	}
	return r
}

func (r credentialRow) toDomain() *domain.Credential {
	var lockedUntil time.Time
	if r.LockedUntil != nil {
		lockedUntil = *r.LockedUntil
	}
	return domain.RehydrateCredential(domain.UserID(r.UserID), r.Hash, r.FailedAttempts, lockedUntil, r.UpdatedAt)
}

type verificationRow struct {
	ID        string    `gorm:"column:id;primaryKey;type:text"`
	Purpose   string    `gorm:"column:purpose;not null;index:verifications_user_id_purpose_idx,priority:2"`
	TokenHash string    `gorm:"column:token_hash;not null;uniqueIndex:verifications_token_hash_key"`
	UserID    string    `gorm:"column:user_id;not null;index:verifications_user_id_purpose_idx,priority:1"`
	Email     string    `gorm:"column:email;not null"`
	ExpiresAt time.Time `gorm:"column:expires_at;not null;index:verifications_expires_at_idx"`
	CreatedAt time.Time `gorm:"column:created_at;not null;autoCreateTime:false"`
}

func (verificationRow) TableName() string { return "verifications" }

func verificationFromDomain(v *domain.Verification) verificationRow {
	return verificationRow{
		ID: v.ID(), Purpose: string(v.Purpose()), TokenHash: string(v.TokenHash()), UserID: string(v.UserID()),
		Email: string(v.Email()), ExpiresAt: v.ExpiresAt(), CreatedAt: v.CreatedAt(),
	}
}

func (r verificationRow) toDomain() *domain.Verification {
	return domain.RehydrateVerification(r.ID, domain.VerificationPurpose(r.Purpose), domain.TokenHash(r.TokenHash),
		domain.UserID(r.UserID), domain.Email(r.Email), r.ExpiresAt, r.CreatedAt)
}

// RowModels returns a new value of every row model, so that a schema-drift
// test can compare them with the migrated schema.
func RowModels() []any {
	return []any{&userRow{}, &sessionRow{}, &credentialRow{}, &verificationRow{},
		&organizationRow{}, &memberRow{}, &invitationRow{},
		&serviceKeyRow{}, &serviceKeySecretRow{}, &auditRow{},
		&domainRow{}, &signingKeyRow{},
		&oauthClientRow{}, &oauthCodeRow{}, &oauthGrantRow{}, &oauthRefreshRow{}, &oauthConsentRow{},
		&totpFactorRow{}, &backupCodeRow{}, &mfaChallengeRow{}, &passkeyRow{}, &webauthnChallengeRow{}, &factorLockoutRow{},
		&identityProviderRow{}, &identityProviderDomainRow{}, &linkedAccountRow{}, &federationStateRow{},
		&outboxRow{},
		&webhookEndpointRow{}, &webhookMessageRow{}, &webhookDeliveryRow{}, &webhookAttemptRow{},
		&spentTokenRow{}}
}
