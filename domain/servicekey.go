package domain

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// ServiceKeyID identifies a ServiceKey.
type ServiceKeyID string

// ServiceKeyPrefix starts every service-key secret, so that secret scanners
// and people recognise one.
const ServiceKeyPrefix = "gh_sk_"

// ServiceKeySecretLength is the number of random [A-Za-z0-9] characters after
// the prefix: 43 × log2(62) ≈ 256 bits.
const ServiceKeySecretLength = 43

// Scope is a permission a service key carries.
type Scope string

// The scopes. ScopeAll grants every scope.
const (
	ScopeUsersRead          Scope = "users:read"
	ScopeUsersWrite         Scope = "users:write"
	ScopeOrganizationsRead  Scope = "organizations:read"
	ScopeOrganizationsWrite Scope = "organizations:write"
	ScopeDomainsRead        Scope = "domains:read"
	ScopeDomainsWrite       Scope = "domains:write"
	ScopeWebhooksRead       Scope = "webhooks:read"
	ScopeWebhooksWrite      Scope = "webhooks:write"
	ScopeAll                Scope = "*"
)

// Scopes lists every scope, in the order documentation shows them.
var Scopes = []Scope{ScopeUsersRead, ScopeUsersWrite, ScopeOrganizationsRead, ScopeOrganizationsWrite, ScopeDomainsRead, ScopeDomainsWrite,
	ScopeWebhooksRead, ScopeWebhooksWrite, ScopeAll}

// ParseScopes checks and de-duplicates scopes; location names the field in
// errors. At least one is required.
func ParseScopes(scopes []string, location string) ([]Scope, error) {
	out := make([]Scope, 0, len(scopes))
	for _, s := range scopes {
		sc := Scope(strings.TrimSpace(s))
		if !slices.Contains(Scopes, sc) {
			return nil, Invalid("service_key.invalid_scope", "Invalid scope", FieldViolation{Field: location,
				Message: "unknown scope; use users:read, users:write, organizations:read, organizations:write, domains:read, domains:write, webhooks:read, webhooks:write or *"})
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	if len(out) == 0 {
		return nil, Invalid("service_key.invalid_scope", "Invalid scope", FieldViolation{Field: location, Message: "must list at least one scope"})
	}
	return out, nil
}

// MaxServiceKeyNameLength bounds a key's name, in characters.
const MaxServiceKeyNameLength = 128

// ServiceKey lets a trusted backend call the trusted routes. Its secrets are
// kept only as hashes (see ServiceKeySecret).
type ServiceKey struct {
	id        ServiceKeyID
	name      string
	scopes    []Scope
	last4     string // the last four characters of the newest secret
	createdBy string // who created it: "user:<id>" or "cli"
	expiresAt time.Time
	createdAt time.Time
	lastUsed  time.Time
	revokedAt time.Time
}

// NewServiceKey returns a key; secret is its first secret, whose last four
// characters are kept for display. expiresAt zero means it does not expire.
func NewServiceKey(id ServiceKeyID, name string, scopes []Scope, secret string, createdBy string, expiresAt, now time.Time) (*ServiceKey, error) {
	name = strings.TrimSpace(name)
	if name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxServiceKeyNameLength {
		return nil, Invalid("service_key.invalid_name", "Invalid name", FieldViolation{Field: "name", Message: "must be 1 to 128 characters"})
	}
	if HasBidiControl(name) {
		return nil, Invalid("service_key.invalid_name", "Invalid name", FieldViolation{Field: "name", Message: bidiMessage})
	}
	if len(scopes) == 0 {
		return nil, Invalid("service_key.invalid_scope", "Invalid scope", FieldViolation{Field: "scopes", Message: "must list at least one scope"})
	}
	if !expiresAt.IsZero() && !expiresAt.After(now) {
		return nil, Invalid("service_key.invalid_expiry", "Invalid expiry", FieldViolation{Field: "expiresAt", Message: "must be in the future"})
	}
	k := &ServiceKey{id: id, name: name, scopes: slices.Clone(scopes), createdBy: createdBy, createdAt: Timestamp(now)}
	if !expiresAt.IsZero() {
		k.expiresAt = Timestamp(expiresAt)
	}
	k.SetSecret(secret)
	return k, nil
}

// RehydrateServiceKey rebuilds a stored key. Only storage adapters call it.
func RehydrateServiceKey(id ServiceKeyID, name string, scopes []Scope, last4, createdBy string, expiresAt, createdAt, lastUsed, revokedAt time.Time) *ServiceKey {
	ts := func(t time.Time) time.Time {
		if t.IsZero() {
			return t
		}
		return Timestamp(t)
	}
	return &ServiceKey{id: id, name: name, scopes: slices.Clone(scopes), last4: last4, createdBy: createdBy,
		expiresAt: ts(expiresAt), createdAt: ts(createdAt), lastUsed: ts(lastUsed), revokedAt: ts(revokedAt)}
}

// ID returns the identifier.
func (k *ServiceKey) ID() ServiceKeyID { return k.id }

// Name returns the name given at creation.
func (k *ServiceKey) Name() string { return k.name }

// Scopes returns the key's scopes.
func (k *ServiceKey) Scopes() []Scope { return slices.Clone(k.scopes) }

// Last4 returns the last four characters of the newest secret.
func (k *ServiceKey) Last4() string { return k.last4 }

// Masked returns the newest secret as it may be shown: prefix and last four.
func (k *ServiceKey) Masked() string { return ServiceKeyPrefix + "…" + k.last4 }

// CreatedBy returns who created the key.
func (k *ServiceKey) CreatedBy() string { return k.createdBy }

// ExpiresAt returns when the key stops working, or zero.
func (k *ServiceKey) ExpiresAt() time.Time { return k.expiresAt }

// CreatedAt returns when the key was created.
func (k *ServiceKey) CreatedAt() time.Time { return k.createdAt }

// LastUsedAt returns when the key last authenticated a request, or zero.
func (k *ServiceKey) LastUsedAt() time.Time { return k.lastUsed }

// RevokedAt returns when the key was revoked, or zero.
func (k *ServiceKey) RevokedAt() time.Time { return k.revokedAt }

// SetSecret records the last four characters of a new secret.
func (k *ServiceKey) SetSecret(secret string) {
	if len(secret) >= 4 {
		k.last4 = secret[len(secret)-4:]
	}
}

// Revoke ends the key at now.
func (k *ServiceKey) Revoke(now time.Time) { k.revokedAt = Timestamp(now) }

// IsActive reports whether the key may authenticate a request at now.
func (k *ServiceKey) IsActive(now time.Time) bool {
	return k.revokedAt.IsZero() && (k.expiresAt.IsZero() || now.Before(k.expiresAt))
}

// HasScope reports whether the key carries scope (or every scope).
func (k *ServiceKey) HasScope(scope Scope) bool {
	return slices.Contains(k.scopes, ScopeAll) || slices.Contains(k.scopes, scope)
}

// ServiceKeySecret is one secret of a key, stored as its hash. A key has one
// secret, or two while a rotation's overlap lasts.
type ServiceKeySecret struct {
	Hash  TokenHash
	KeyID ServiceKeyID
	// ExpiresAt is when a rotated-out secret stops working; zero for the newest.
	ExpiresAt time.Time
	CreatedAt time.Time
}

// IsActive reports whether the secret still works at now.
func (s ServiceKeySecret) IsActive(now time.Time) bool {
	return s.ExpiresAt.IsZero() || now.Before(s.ExpiresAt)
}

// The errors the stores return for this aggregate, created once so that
// every store answers each condition with the same kind, code and message.
var (
	ErrServiceKeyNotFound = NotFound("service_key.not_found", "service key")
	ErrServiceKeyExists   = NewError(KindConflict, "service_key.exists", "a service key with this id or secret already exists")
)
