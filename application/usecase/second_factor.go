package usecase

import (
	"context"
	"errors"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// What a password sign-in (account), an upstream sign-in (federation) and
// the second factors (mfa) share: the challenge a sign-in of a user with
// two-factor on starts instead of a session, and the trusted browsers that
// skip it.

// The second-factor challenge's rules.
const (
	// MFAMaxAttempts is how many wrong answers a challenge takes.
	MFAMaxAttempts = 5
	// MFAChallengeTTL is how long a challenge lives (the two_factor cookie).
	MFAChallengeTTL = domain.MFAChallengeMaxTTL
	// TrustDeviceTTL is how long a trusted browser skips the challenge
	// (the trust_device cookie); each use starts it again.
	TrustDeviceTTL = 30 * 24 * time.Hour
)

// ErrAccountLocked refuses a second factor's answer while the user's
// budget of wrong answers (the account lockout) is spent.
var ErrAccountLocked = domain.NewError(domain.KindRateLimited, "mfa.account_locked",
	"Too many failed verification attempts. Your account is temporarily locked. Please try again later.")

// StartMFAChallenge records a second-factor challenge for u's sign-in and
// returns its id (for the two_factor cookie); only its hash is stored.
func StartMFAChallenge(ctx context.Context, challenges ports.MFAChallengeRepository, tokens ports.TokenGenerator, now time.Time, u domain.UserID, rememberMe bool) (string, error) {
	id := tokens.NewToken()
	c, err := domain.NewMFAChallenge([]byte(domain.HashToken(id)), u, now, now.Add(MFAChallengeTTL), MFAMaxAttempts, rememberMe)
	if err != nil {
		return "", err
	}
	if err := challenges.Create(ctx, c); err != nil {
		return "", err
	}
	return id, nil
}

// TrustBrowser records a trusted browser of u and returns its token (for
// the trust_device cookie). Only the hash of the user id and the token is
// stored, so the cookie counts only at its own user's sign-in and another
// user's sign-in in that browser neither finds nor uses up the record.
func TrustBrowser(ctx context.Context, trust ports.VerificationRepository, si SessionIssuer, u *domain.User) (string, error) {
	token := si.Tokens.NewToken()
	v := domain.NewVerification(si.IDs.NewID(), domain.PurposeTrustDevice, trustHash(u.ID(), token), u.ID(), u.Email(), TrustDeviceTTL, si.Clock.Now())
	if err := trust.Create(ctx, v); err != nil {
		return "", err
	}
	return token, nil
}

// ForgetTrustedBrowsers removes every trusted browser of user: a new
// password (changed or reset; an administrator's does the same in
// admin.SetUserPassword) or two-factor turned off ends what a browser was
// trusted for, so the next sign-in asks for the second factor again.
func ForgetTrustedBrowsers(ctx context.Context, trust ports.VerificationRepository, user domain.UserID) error {
	_, err := trust.DeleteByUser(ctx, user, domain.PurposeTrustDevice)
	return err
}

// trustHash is what is stored of a trust_device token of user.
func trustHash(user domain.UserID, token string) domain.TokenHash {
	return domain.HashToken(string(user) + "!" + token)
}

// UseTrustedBrowser reports whether token names a live trusted browser of
// u, using it up; when it does, it returns the token that replaces it.
func UseTrustedBrowser(ctx context.Context, trust ports.VerificationRepository, si SessionIssuer, u *domain.User, token string) (string, bool, error) {
	v, err := trust.Consume(ctx, domain.PurposeTrustDevice, trustHash(u.ID(), token))
	if errors.Is(err, domain.ErrNotFound) {
		return "", false, nil
	} else if err != nil {
		return "", false, err
	}
	if v.UserID() != u.ID() || v.IsExpired(si.Clock.Now()) {
		return "", false, nil
	}
	next, err := TrustBrowser(ctx, trust, si, u)
	return next, err == nil, err
}

// SignInOutcome says how a sign-in that returned err ended: the refusals
// the service chose by their reason, the service's own failures as errors,
// and every other refusal (wrong or unknown credentials, a wrong code, bad
// input) as a failure.
func SignInOutcome(err error) ports.SignInOutcome {
	switch {
	case err == nil:
		return ports.SignInSuccess
	case errors.Is(err, ErrAccountLocked):
		return ports.SignInLocked
	case errors.Is(err, ErrBannedUser):
		return ports.SignInBanned
	case errors.Is(err, ErrEmailNotVerified):
		return ports.SignInEmailNotVerified
	case errors.Is(err, ErrSSORequired):
		return ports.SignInSSORequired
	}
	switch domain.KindOf(err) {
	case domain.KindInternal, domain.KindUnavailable:
		return ports.SignInError
	}
	return ports.SignInFailure
}

// ObserveSignIn counts a sign-in by method that ended with err in o and c,
// if any.
func ObserveSignIn(ctx context.Context, o ports.Observer, c *SignInCounter, method ports.SignInMethod, err error) {
	CountSignIn(ctx, o, c, method, SignInOutcome(err))
}

// CountSignIn counts a sign-in by method that ended with outcome in o and
// c, if any (a nil o or c counts nothing there).
func CountSignIn(ctx context.Context, o ports.Observer, c *SignInCounter, method ports.SignInMethod, outcome ports.SignInOutcome) {
	if o != nil {
		o.SignIn(method, outcome)
	}
	c.Count(ctx, outcome)
}
