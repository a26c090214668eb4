package domain

import (
	"slices"
	"time"
	"unicode/utf8"
)

// SessionID is a session's public handle. Users see it when they list their
// sessions and use it to revoke one; it is not a credential.
type SessionID string

// String returns the identifier.
func (id SessionID) String() string { return string(id) }

// SessionPolicy is how long sessions live.
type SessionPolicy struct {
	// Lifetime of a remembered session, pushed forward on refresh (default 7 days).
	Lifetime time.Duration
	// ShortLifetime of a session whose user chose not to be remembered (default 1 day).
	ShortLifetime time.Duration
	// UpdateAge: a remembered session is refreshed once it is this old since
	// its last refresh (default 1 day).
	UpdateAge time.Duration
	// FreshAge: a session younger than this counts as a recent sign-in, which
	// some operations require (default 1 day; 0 means always fresh).
	FreshAge time.Duration
}

// Session is one signed-in device. The bearer token itself is never kept: only
// its hash, so nothing in storage can be replayed.
type Session struct {
	id         SessionID
	userID     UserID
	tokenHash  TokenHash
	rememberMe bool
	ipAddress  string
	userAgent  string
	// activeOrganizationID is the organization the user is working in, or "".
	activeOrganizationID OrganizationID
	// impersonatedBy is the administrator acting as the user, or "".
	impersonatedBy UserID
	expiresAt      time.Time
	createdAt      time.Time
	updatedAt      time.Time
	// auth is how the user proved who they are in this session.
	auth Authentication
}

// maxUserAgentLength bounds what is kept of a User-Agent header.
const maxUserAgentLength = 512

// NewSession starts a session for userID, identified by the hash of its token.
func NewSession(id SessionID, userID UserID, token TokenHash, rememberMe bool, ipAddress, userAgent string, policy SessionPolicy, now time.Time) *Session {
	now = Timestamp(now)
	lifetime := policy.Lifetime
	if !rememberMe {
		lifetime = policy.ShortLifetime
	}
	if len(userAgent) > maxUserAgentLength {
		// Cut at a character boundary: half a character is invalid UTF-8,
		// which PostgreSQL refuses to store.
		n := maxUserAgentLength
		for n > 0 && !utf8.RuneStart(userAgent[n]) {
			n--
		}
		userAgent = userAgent[:n]
	}
	return &Session{
		id: id, userID: userID, tokenHash: token, rememberMe: rememberMe,
		ipAddress: ipAddress, userAgent: userAgent,
		expiresAt: Timestamp(now.Add(lifetime)), createdAt: now, updatedAt: now,
	}
}

// RehydrateSession rebuilds a stored session. Only storage adapters call it.
func RehydrateSession(id SessionID, userID UserID, token TokenHash, rememberMe bool, ipAddress, userAgent string, activeOrganizationID OrganizationID, impersonatedBy UserID, expiresAt, createdAt, updatedAt time.Time, auth Authentication) *Session {
	return &Session{
		id: id, userID: userID, tokenHash: token, rememberMe: rememberMe, ipAddress: ipAddress, userAgent: userAgent,
		activeOrganizationID: activeOrganizationID, impersonatedBy: impersonatedBy,
		expiresAt: Timestamp(expiresAt), createdAt: Timestamp(createdAt), updatedAt: Timestamp(updatedAt),
		// The adapter hands over the methods it decoded: no copy.
		auth: Authentication{Methods: auth.Methods, SecondFactorAt: timestampOrZero(auth.SecondFactorAt)},
	}
}

func timestampOrZero(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return Timestamp(t)
}

// ID returns the public handle.
func (s *Session) ID() SessionID { return s.id }

// UserID returns whose session it is.
func (s *Session) UserID() UserID { return s.userID }

// TokenHash returns the hash of the bearer token.
func (s *Session) TokenHash() TokenHash { return s.tokenHash }

// RememberMe reports whether the session outlives the browser session.
func (s *Session) RememberMe() bool { return s.rememberMe }

// IPAddress returns the client address the session was created from.
func (s *Session) IPAddress() string { return s.ipAddress }

// UserAgent returns the User-Agent the session was created with.
func (s *Session) UserAgent() string { return s.userAgent }

// ExpiresAt returns when the session ends.
func (s *Session) ExpiresAt() time.Time { return s.expiresAt }

// CreatedAt returns when the user signed in.
func (s *Session) CreatedAt() time.Time { return s.createdAt }

// UpdatedAt returns when the session was last refreshed.
func (s *Session) UpdatedAt() time.Time { return s.updatedAt }

// IsExpired reports whether the session has ended at now.
func (s *Session) IsExpired(now time.Time) bool { return !now.Before(s.expiresAt) }

// NeedsRefresh reports whether a remembered session is due to have its
// expiry pushed forward: UpdateAge has passed since it was last set.
// Sessions that are not remembered keep their short, fixed lifetime.
func (s *Session) NeedsRefresh(now time.Time, p SessionPolicy) bool {
	if !s.rememberMe || p.UpdateAge <= 0 {
		return false
	}
	return !s.expiresAt.Add(-p.Lifetime).Add(p.UpdateAge).After(now)
}

// Refresh pushes the expiry to now plus the lifetime.
func (s *Session) Refresh(now time.Time, p SessionPolicy) {
	now = Timestamp(now)
	s.expiresAt = Timestamp(now.Add(p.Lifetime))
	s.updatedAt = now
}

// IsFresh reports whether the user signed in recently enough for sensitive
// operations.
func (s *Session) IsFresh(now time.Time, p SessionPolicy) bool {
	return p.FreshAge <= 0 || now.Sub(s.createdAt) < p.FreshAge
}

// ActiveOrganizationID returns the organization the session works in, or "".
func (s *Session) ActiveOrganizationID() OrganizationID { return s.activeOrganizationID }

// SetActiveOrganization makes id (or none, with "") the session's organization.
func (s *Session) SetActiveOrganization(id OrganizationID, now time.Time) {
	s.activeOrganizationID = id
	s.updatedAt = Timestamp(now)
}

// ImpersonatedBy returns the administrator acting through this session, or "".
func (s *Session) ImpersonatedBy() UserID { return s.impersonatedBy }

// NewImpersonationSession starts a session in which admin acts as userID. It
// is never remembered and ends after ttl, whatever the session policy says.
func NewImpersonationSession(id SessionID, userID, admin UserID, token TokenHash, ipAddress, userAgent string, ttl time.Duration, now time.Time) *Session {
	s := NewSession(id, userID, token, false, ipAddress, userAgent, SessionPolicy{ShortLifetime: ttl}, now)
	s.impersonatedBy = admin
	return s
}

// Clone returns a copy of s that shares nothing with it that a change to
// one could reach through the other.
func (s *Session) Clone() *Session {
	c := *s
	c.auth.Methods = slices.Clone(s.auth.Methods)
	return &c
}

// The errors the stores return for this aggregate, created once so that
// every store answers each condition with the same kind, code and message.
var (
	ErrSessionNotFound = NotFound("session.not_found", "session")
	ErrSessionExists   = NewError(KindConflict, "session.exists", "a session with this id or token already exists")
	// ErrActiveOrganizationNotFound is a session made active in an
	// organization that does not exist.
	ErrActiveOrganizationNotFound = NotFound("organization.not_found", "organization")
)
