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
	recordFailure(&c.failedAttempts, &c.lockedUntil, now, p)
	c.updatedAt = Timestamp(now)
}

// RefundFailure takes back the failure RecordFailure counted at now, for an
// attempt counted before its answer was looked at that turned out to be no
// answer at all; prev is when the lockout ended before that failure.
func (c *Credential) RefundFailure(now, prev time.Time, p LockoutPolicy) {
	refundFailure(&c.failedAttempts, &c.lockedUntil, now, prev, p)
	c.updatedAt = Timestamp(now)
}

func recordFailure(n *int, lockedUntil *time.Time, now time.Time, p LockoutPolicy) {
	*n++
	if p.Threshold > 0 && *n >= p.Threshold {
		*lockedUntil = Timestamp(now.Add(p.Cooldown))
	}
}

// refundFailure undoes recordFailure at now: one failure fewer, and the
// lockout it started (if no later failure moved it) back to prev.
func refundFailure(n *int, lockedUntil *time.Time, now, prev time.Time, p LockoutPolicy) {
	if *n > 0 {
		*n--
	}
	if p.Threshold > 0 && lockedUntil.Equal(Timestamp(now.Add(p.Cooldown))) {
		*lockedUntil = Timestamp(prev)
		if prev.IsZero() {
			*lockedUntil = time.Time{}
		}
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

// FactorLockout counts the wrong second-factor answers of a user without a
// password, who has no Credential to count them on: the same threshold
// and cooldown (LockoutPolicy) lock their second factor. A user with a
// password counts them on the password's Credential, shared with sign-in.
type FactorLockout struct {
	UserID         UserID
	FailedAttempts int
	// LockedUntil is when the lockout ends, or the zero time.
	LockedUntil time.Time
	UpdatedAt   time.Time
}

// IsLocked reports whether second-factor answers are refused at now.
func (l FactorLockout) IsLocked(now time.Time) bool { return now.Before(l.LockedUntil) }

// RecordFailure counts a wrong answer, as Credential.RecordFailure does.
func (l *FactorLockout) RecordFailure(now time.Time, p LockoutPolicy) {
	recordFailure(&l.FailedAttempts, &l.LockedUntil, now, p)
	l.UpdatedAt = Timestamp(now)
}

// RefundFailure takes back a failure, as Credential.RefundFailure does.
func (l *FactorLockout) RefundFailure(now, prev time.Time, p LockoutPolicy) {
	refundFailure(&l.FailedAttempts, &l.LockedUntil, now, prev, p)
	l.UpdatedAt = Timestamp(now)
}

// RecordSuccess forgets earlier failures.
func (l *FactorLockout) RecordSuccess(now time.Time) {
	l.FailedAttempts = 0
	l.LockedUntil = time.Time{}
	l.UpdatedAt = Timestamp(now)
}

// The errors the stores return for this aggregate, created once so that
// every store answers each condition with the same kind, code and message.
var (
	ErrCredentialNotFound = NotFound("credential.not_found", "credential")
)
