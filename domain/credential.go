package domain

import "time"

// LockoutPolicy throttles password guessing against one account, whatever
// addresses the guesses come from (NIST SP 800-63B-4 §3.2.2).
type LockoutPolicy struct {
	// Threshold is the number of consecutive failures that locks the
	// password (default 10; 0 disables the lockout).
	Threshold int
	// Cooldown is how long the password stays locked (default 15 minutes).
	Cooldown time.Duration
}

// Credential is a user's password: its hash and the count of consecutive
// failed attempts. It is kept apart from the profile so that reading a user
// never reads their hash.
type Credential struct {
	userID         UserID
	hash           string
	failedAttempts int
	lockedUntil    time.Time
	updatedAt      time.Time
}

// NewCredential returns the credential of userID with an encoded hash.
func NewCredential(userID UserID, hash string, now time.Time) *Credential {
	return &Credential{userID: userID, hash: hash, updatedAt: Timestamp(now)}
}

// RehydrateCredential rebuilds a stored credential. Only storage adapters call it.
func RehydrateCredential(userID UserID, hash string, failedAttempts int, lockedUntil, updatedAt time.Time) *Credential {
	c := &Credential{userID: userID, hash: hash, failedAttempts: failedAttempts, updatedAt: Timestamp(updatedAt)}
	if !lockedUntil.IsZero() {
		c.lockedUntil = Timestamp(lockedUntil)
	}
	return c
}

// UserID returns whose password it is.
func (c *Credential) UserID() UserID { return c.userID }

// Hash returns the encoded password hash.
func (c *Credential) Hash() string { return c.hash }

// FailedAttempts returns the number of consecutive failures.
func (c *Credential) FailedAttempts() int { return c.failedAttempts }

// LockedUntil returns when a lockout ends, or the zero time.
func (c *Credential) LockedUntil() time.Time { return c.lockedUntil }

// UpdatedAt returns when the credential last changed.
func (c *Credential) UpdatedAt() time.Time { return c.updatedAt }

// IsLocked reports whether password attempts are refused at now.
func (c *Credential) IsLocked(now time.Time) bool { return now.Before(c.lockedUntil) }

// SetHash replaces the hash (a new password, or a rehash) and clears any
// lockout: whoever sets a password has proved who they are.
func (c *Credential) SetHash(hash string, now time.Time) {
	c.hash = hash
	c.failedAttempts = 0
	c.lockedUntil = time.Time{}
	c.updatedAt = Timestamp(now)
}

// RecordFailure counts a wrong password and locks the credential for the
// cooldown once the threshold is reached. After a lockout ends, the next
// failure locks it again at once, so a patient attacker gets one guess per
// cooldown.
func (c *Credential) RecordFailure(now time.Time, p LockoutPolicy) {
	c.failedAttempts++
	c.updatedAt = Timestamp(now)
	if p.Threshold > 0 && c.failedAttempts >= p.Threshold {
		c.lockedUntil = Timestamp(now.Add(p.Cooldown))
	}
}

// RecordSuccess forgets earlier failures.
func (c *Credential) RecordSuccess(now time.Time) {
	if c.failedAttempts == 0 && c.lockedUntil.IsZero() {
		return
	}
	c.failedAttempts = 0
	c.lockedUntil = time.Time{}
	c.updatedAt = Timestamp(now)
}
