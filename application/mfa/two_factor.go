package mfa

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Two-factor sign-in (Better Auth's twoFactor plugin): a TOTP factor with
// backup codes, enabled with the password and turned on by the first
// accepted code. Sign-in of a user with two-factor on creates no session but
// a challenge (account.SignIns, or federation.SignIns upstream),
// answered here with a TOTP code or a backup code; at most
// usecase.MFAMaxAttempts wrong answers per challenge, and each one counts
// towards the account lockout as a wrong password does, as do the wrong
// codes answered in a signed-in session (factorBudget).

// The second-factor rules.
const (
	// EmailOTPTTL is how long an e-mailed code works (Better Auth: 3 min).
	EmailOTPTTL = 3 * time.Minute
	// BackupCodeCount is how many backup codes a user gets.
	BackupCodeCount = 10
	// totpSealPurpose binds a sealed TOTP secret to its use.
	totpSealPurpose = "totp"
)

// The errors of two-factor sign-in.
var (
	ErrTOTPAlreadyEnabled  = domain.Invalid("mfa.totp_already_enabled", "TOTP is already enabled")
	ErrTOTPNotEnabled      = domain.Invalid("mfa.totp_not_enabled", "TOTP not enabled")
	ErrTwoFactorNotEnabled = domain.Invalid("mfa.two_factor_not_enabled", "Two factor isn't enabled")
	ErrInvalidCode         = domain.NewError(domain.KindUnauthenticated, "mfa.invalid_code", "Invalid code")
	ErrInvalidBackupCode   = domain.NewError(domain.KindUnauthenticated, "mfa.invalid_backup_code", "Invalid backup code")
	ErrInvalidChallenge    = domain.NewError(domain.KindUnauthenticated, "mfa.invalid_challenge", "Invalid two factor cookie")
	ErrOTPExpired          = domain.Invalid("mfa.otp_expired", "OTP has expired")
	ErrTooManyAttempts     = domain.Invalid("mfa.too_many_attempts", "Too many attempts. Please request a new code.")
)

// EnableTwoFactor starts enrolment: a new TOTP secret and new backup codes.
type EnableTwoFactor struct {
	Principal usecase.Principal
	Password  string
	Issuer    string // the name an authenticator app shows; default the product name
	// Method is "totp" (the default) or "otp": e-mailed codes, on at once.
	Method string
	Client usecase.Client
	Origin usecase.Origin
}

// The methods enable takes.
const (
	MethodTOTP = "totp"
	MethodOTP  = "otp"
)

// EnableTwoFactorResult is, for TOTP, the key URI to scan and the backup
// codes, shown once; for the e-mailed code, the session that replaces the
// current one (two-factor is on at once).
type EnableTwoFactorResult struct {
	Method      string
	TOTPURI     string
	BackupCodes []string
	Rotated     *RotatedSession
}

// RotatedSession is the session that replaced the signed-in one when
// two-factor turned on (Better Auth rotates the session then): the old
// token no longer works.
type RotatedSession struct {
	Session *domain.Session
	Token   string
}

// TwoFactorPassword is a two-factor change proven by the password: get the
// TOTP URI, generate new backup codes, disable.
type TwoFactorPassword struct {
	Principal usecase.Principal
	Password  string
	Origin    usecase.Origin
}

// VerifySecondFactor answers with a code, either for the signed-in user
// (Principal set: confirming enrolment or re-checking) or for the pending
// challenge of a password sign-in (ChallengeID, from the two_factor cookie).
type VerifySecondFactor struct {
	Principal   *usecase.Principal
	ChallengeID string
	Code        string
	// TrustDevice asks, on the challenge path, that this browser skip the
	// challenge for usecase.TrustDeviceTTL.
	TrustDevice bool
	Client      usecase.Client
	Origin      usecase.Origin
}

// VerifySecondFactorResult is the user and their session: the current one
// on the session path, a new one (NewSession) on the challenge path.
type VerifySecondFactorResult struct {
	User       *domain.User
	Session    *domain.Session
	Token      string
	NewSession bool
	// Rotated is set when the answer turned two-factor on in a session:
	// Session and Token are then the new session, which replaced the old.
	Rotated bool
	// TrustToken is the new trust_device token, when one was asked for.
	TrustToken string
}

// TwoFactor is a user's two-factor: one method per use case of the plugin.
type TwoFactor struct {
	users       ports.UserRepository
	credentials ports.CredentialRepository
	factors     ports.TwoFactorRepository
	challenges  ports.MFAChallengeRepository
	trust       ports.VerificationRepository
	mailer      ports.Mailer
	sealer      ports.SecretSealer
	sessions    ports.SessionRepository
	issuer      usecase.SessionIssuer
	revoker     usecase.SessionRevoker
	check       usecase.PasswordCheck
	audit       usecase.Auditor
	stepUp      usecase.StepUp
	budget      factorBudget
	settings    usecase.AuthSettings
	observer    ports.Observer         // nil: sign-ins are not counted
	counter     *usecase.SignInCounter // nil: nor recorded
}

// NewTwoFactor returns a TwoFactor.
func NewTwoFactor(users ports.UserRepository, credentials ports.CredentialRepository, factors ports.TwoFactorRepository,
	challenges ports.MFAChallengeRepository, verifications ports.VerificationRepository, mailer ports.Mailer, sealer ports.SecretSealer,
	sessions ports.SessionRepository, hasher ports.PasswordHasher, passkeys ports.PasskeyRepository, tokens ports.TokenGenerator,
	ids ports.IDGenerator, clock ports.Clock, audit usecase.Auditor, settings usecase.AuthSettings) *TwoFactor {
	usecase.MustHave(users, credentials, factors, challenges, verifications, mailer, sealer, sessions, hasher, passkeys, tokens, ids, clock)
	return &TwoFactor{users: users, credentials: credentials, factors: factors, challenges: challenges, trust: verifications,
		mailer: mailer, sealer: sealer, sessions: sessions, audit: audit,
		settings: settings, issuer: usecase.NewSessionIssuer(sessions, audit.Events(), tokens, ids, clock, settings.Sessions),
		revoker: usecase.NewSessionRevoker(sessions, audit.Events(), clock),
		check:   usecase.NewPasswordCheck(credentials, hasher, clock, settings.Lockout),
		stepUp:  usecase.NewStepUp(passkeys, clock, settings.StepUpWindow),
		budget:  factorBudget{credentials: credentials, factors: factors, clock: clock, policy: settings.Lockout}}
}

// Enable checks the password and stores a new unverified TOTP secret and ten
// new backup codes (replacing an unverified enrolment). Two-factor turns on
// only with the first accepted code. A user with it on gets
// ErrTOTPAlreadyEnabled.
//
// With Method "otp" (Better Auth 1.7.25's enable {method: "otp"}), the
// password turns two-factor on at once with the e-mailed code as the
// second factor, and the session is rotated as at a first accepted code.
func (h *TwoFactor) Enable(ctx context.Context, cmd EnableTwoFactor) (*EnableTwoFactorResult, error) {
	u := cmd.Principal.User
	if cmd.Method == MethodOTP {
		return h.enableOTP(ctx, cmd)
	}
	if u.TwoFactorEnabled() {
		return nil, ErrTOTPAlreadyEnabled
	}
	if err := h.check.Prove(ctx, u.ID(), cmd.Password); err != nil {
		return nil, err
	}
	secret := domain.NewTOTPSecret()
	sealed, err := h.sealer.Seal(totpSealPurpose, string(u.ID()), secret)
	if err != nil {
		return nil, err
	}
	now := h.issuer.Clock.Now()
	f, err := domain.NewTOTPFactor(u.ID(), sealed, now)
	if err != nil {
		return nil, err
	}
	if err := h.factors.SaveTOTP(ctx, f); errors.Is(err, domain.ErrTOTPExists) {
		return nil, ErrTOTPAlreadyEnabled
	} else if err != nil {
		return nil, err
	}
	codes, err := h.replaceBackupCodes(ctx, u.ID(), now)
	if err != nil {
		return nil, err
	}
	return &EnableTwoFactorResult{Method: MethodTOTP, TOTPURI: domain.TOTPURI(secret, h.issuerName(cmd.Issuer), string(u.Email())),
		BackupCodes: codes}, nil
}

// enableOTP turns two-factor on with the e-mailed code, proven by the
// password, and rotates the session. Better Auth does so even when it is
// already on; so does this.
func (h *TwoFactor) enableOTP(ctx context.Context, cmd EnableTwoFactor) (*EnableTwoFactorResult, error) {
	u := cmd.Principal.User
	if err := h.check.Prove(ctx, u.ID(), cmd.Password); err != nil {
		return nil, h.audit.RecordSelf(ctx, u.ID(), cmd.Origin, "two-factor.enable", err)
	}
	if !u.TwoFactorEnabled() {
		if err := h.turnOn(ctx, u, cmd.Origin, domain.FactorEmailOTP); err != nil {
			return nil, err
		}
	}
	r, err := h.rotate(ctx, cmd.Principal, cmd.Client, domain.MethodPassword)
	if err != nil {
		return nil, err
	}
	return &EnableTwoFactorResult{Method: MethodOTP, Rotated: r}, nil
}

// turnOn turns two-factor on for u (and in u), with factor as the second
// factor that proved it: an enrolment, audited as two-factor.enable from o
// with its factor.enabled event.
func (h *TwoFactor) turnOn(ctx context.Context, u *domain.User, o usecase.Origin, factor string) error {
	now := h.issuer.Clock.Now()
	err := h.audit.ChangeSelf(ctx, u.ID(), o, "two-factor.enable", func(ctx context.Context, emit usecase.Emit) error {
		if err := h.users.Update(ctx, u.ID(), func(x *domain.User) error {
			x.SetTwoFactorEnabled(true, now)
			return nil
		}); err != nil {
			return err
		}
		emit(domain.EventFactorEnabled, domain.FactorChange{UserID: u.ID(), Factor: factor})
		return nil
	})
	if err != nil {
		return err
	}
	u.SetTwoFactorEnabled(true, now)
	return nil
}

// rotate replaces the signed-in session p with a new one, as Better Auth
// does when two-factor turns on: the new session keeps the old one's
// authentication, with proven added (domain.MethodOTP: the code just
// answered steps it up; domain.MethodPassword adds nothing new), and the
// old token stops working. An impersonation session is not rotated (a new
// one would drop the impersonation): it is stepped up in place.
func (h *TwoFactor) rotate(ctx context.Context, p usecase.Principal, c usecase.Client, proven domain.AuthMethod) (*RotatedSession, error) {
	now := h.issuer.Clock.Now()
	old := p.Session
	auth := old.Authentication()
	if proven == domain.MethodOTP {
		auth.Prove(proven, now)
	}
	if old.ImpersonatedBy() != "" {
		return nil, h.proveInSession(ctx, old, proven, now)
	}
	r := &RotatedSession{}
	err := h.issuer.Events().Do(ctx, func(ctx context.Context, _ usecase.Emit) error {
		var err error
		if r.Session, r.Token, err = h.issuer.Start(ctx, p.User.ID(), old.RememberMe(), c, auth); err != nil {
			return err
		}
		return usecase.IgnoreGone(h.revoker.Revoke(ctx, old))
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// proveInSession records in session s that a second factor was proven at now.
func (h *TwoFactor) proveInSession(ctx context.Context, s *domain.Session, proven domain.AuthMethod, now time.Time) error {
	if proven != domain.MethodOTP {
		return nil
	}
	return h.sessions.Update(ctx, s.ID(), func(x *domain.Session) error {
		x.ProveSecondFactor(domain.MethodOTP, now)
		*s = *x
		return nil
	})
}

func (h *TwoFactor) issuerName(issuer string) string {
	if issuer != "" {
		return issuer
	}
	if h.settings.ProductName != "" {
		return h.settings.ProductName
	}
	return "Gatehouse"
}

func (h *TwoFactor) replaceBackupCodes(ctx context.Context, user domain.UserID, now time.Time) ([]string, error) {
	codes, err := domain.NewBackupCodes(BackupCodeCount)
	if err != nil {
		return nil, domain.Internal("two-factor: backup codes", err)
	}
	hashes := make([][]byte, len(codes))
	for i, c := range codes {
		hashes[i] = domain.HashBackupCode(c)
	}
	if err := h.factors.ReplaceBackupCodes(ctx, user, hashes, now); err != nil {
		return nil, err
	}
	return codes, nil
}

// TOTPURI checks the password and returns the key URI of the user's factor.
// The URI holds the secret, so whoever reads it holds the factor: a user
// with a second factor must have proven one recently (step-up).
func (h *TwoFactor) TOTPURI(ctx context.Context, cmd TwoFactorPassword) (string, error) {
	u := cmd.Principal.User
	f, err := h.factors.GetTOTP(ctx, u.ID())
	if errors.Is(err, domain.ErrNotFound) {
		return "", ErrTOTPNotEnabled
	} else if err != nil {
		return "", err
	}
	if err := h.stepUp.Require(ctx, cmd.Principal); err != nil {
		return "", err
	}
	if err := h.check.Prove(ctx, u.ID(), cmd.Password); err != nil {
		return "", err
	}
	secret, err := h.sealer.Open(totpSealPurpose, string(u.ID()), f.SealedSecret)
	if err != nil {
		return "", err
	}
	return domain.TOTPURI(secret, h.issuerName(""), string(u.Email())), nil
}

// GenerateBackupCodes checks the password and replaces the backup codes of
// a user with two-factor on (factor.enabled, backup_codes). New codes are a
// second factor in the caller's hands, so the user must have proven one
// recently (step-up). Audited as two-factor.backup-codes, refusals
// included.
func (h *TwoFactor) GenerateBackupCodes(ctx context.Context, cmd TwoFactorPassword) ([]string, error) {
	u := cmd.Principal.User
	if err := h.mayChange(ctx, cmd.Principal, cmd.Password, true); err != nil {
		return nil, h.audit.RecordSelf(ctx, u.ID(), cmd.Origin, "two-factor.backup-codes", err)
	}
	var codes []string
	err := h.audit.ChangeSelf(ctx, u.ID(), cmd.Origin, "two-factor.backup-codes", func(ctx context.Context, emit usecase.Emit) error {
		var err error
		if codes, err = h.replaceBackupCodes(ctx, u.ID(), h.issuer.Clock.Now()); err != nil {
			return err
		}
		emit(domain.EventFactorEnabled, domain.FactorChange{UserID: u.ID(), Factor: domain.FactorBackupCodes})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return codes, nil
}

// mayChange refuses a change of p's second factors unless p has proven one
// recently (step-up) and password is theirs; with needOn, a user with
// two-factor off is refused first.
func (h *TwoFactor) mayChange(ctx context.Context, p usecase.Principal, password string, needOn bool) error {
	if needOn && !p.User.TwoFactorEnabled() {
		return ErrTwoFactorNotEnabled
	}
	if err := h.stepUp.Require(ctx, p); err != nil {
		return err
	}
	return h.check.Prove(ctx, p.User.ID(), password)
}

// Disable checks the password, removes the TOTP factor and the backup codes
// and turns two-factor off (factor.disabled, naming totp, or email_otp for
// a user without a TOTP factor, when two-factor was on or a TOTP factor
// went). A user with a second factor must have proven one recently
// (step-up), before the password is tried. Audited as two-factor.disable,
// refusals included.
func (h *TwoFactor) Disable(ctx context.Context, cmd TwoFactorPassword) error {
	u := cmd.Principal.User
	if err := h.mayChange(ctx, cmd.Principal, cmd.Password, false); err != nil {
		return h.audit.RecordSelf(ctx, u.ID(), cmd.Origin, "two-factor.disable", err)
	}
	return h.audit.ChangeSelf(ctx, u.ID(), cmd.Origin, "two-factor.disable", func(ctx context.Context, emit usecase.Emit) error {
		return h.disable(ctx, u, emit)
	})
}

func (h *TwoFactor) disable(ctx context.Context, u *domain.User, emit usecase.Emit) error {
	factor := domain.FactorTOTP
	if err := h.factors.DeleteTOTP(ctx, u.ID()); errors.Is(err, domain.ErrNotFound) {
		factor = domain.FactorEmailOTP
	} else if err != nil {
		return err
	}
	now := h.issuer.Clock.Now()
	if err := h.factors.ReplaceBackupCodes(ctx, u.ID(), nil, now); err != nil {
		return err
	}
	// Every trusted browser of the user, not only this one (Better Auth
	// forgets only the current browser's).
	if err := usecase.ForgetTrustedBrowsers(ctx, h.trust, u.ID()); err != nil {
		return err
	}
	if err := h.users.Update(ctx, u.ID(), func(x *domain.User) error {
		x.SetTwoFactorEnabled(false, now)
		return nil
	}); err != nil {
		return err
	}
	if factor == domain.FactorTOTP || u.TwoFactorEnabled() {
		emit(domain.EventFactorDisabled, domain.FactorChange{UserID: u.ID(), Factor: factor})
	}
	return nil
}

// VerifyTOTP answers with a TOTP code. A code of a step already used (or an
// earlier one) is refused. The first accepted code on the session path turns
// two-factor on.
func (h *TwoFactor) VerifyTOTP(ctx context.Context, cmd VerifySecondFactor) (*VerifySecondFactorResult, error) {
	return h.verify(ctx, cmd, ErrInvalidCode, func(u *domain.User, c *domain.MFAChallenge) error {
		enrol := c == nil
		f, err := h.factors.GetTOTP(ctx, u.ID())
		if errors.Is(err, domain.ErrNotFound) || (err == nil && !f.Verified && !enrol) {
			return ErrTOTPNotEnabled
		} else if err != nil {
			return err
		}
		secret, err := h.sealer.Open(totpSealPurpose, string(u.ID()), f.SealedSecret)
		if err != nil {
			return err
		}
		now := h.issuer.Clock.Now()
		step, ok := domain.VerifyTOTP(secret, cmd.Code, now, f.LastUsedStep)
		if !ok {
			return ErrInvalidCode
		}
		if f.Verified {
			err = h.factors.UseTOTPStep(ctx, u.ID(), step)
		} else {
			err = h.factors.VerifyTOTP(ctx, u.ID(), step, now)
		}
		if errors.Is(err, domain.ErrTOTPStepReplayed) {
			return ErrInvalidCode
		}
		if err != nil || u.TwoFactorEnabled() {
			return err
		}
		return h.turnOn(ctx, u, cmd.Origin, domain.FactorTOTP)
	})
}

// VerifyBackupCode answers with a backup code, which is used up.
func (h *TwoFactor) VerifyBackupCode(ctx context.Context, cmd VerifySecondFactor) (*VerifySecondFactorResult, error) {
	return h.verify(ctx, cmd, ErrInvalidBackupCode, func(u *domain.User, _ *domain.MFAChallenge) error {
		if !u.TwoFactorEnabled() {
			return ErrTwoFactorNotEnabled
		}
		err := h.factors.UseBackupCode(ctx, u.ID(), domain.HashBackupCode(cmd.Code), h.issuer.Clock.Now())
		if errors.Is(err, domain.ErrNotFound) {
			return ErrInvalidBackupCode
		}
		return err
	})
}

// ErrOTPPending refuses a new e-mailed code for a session while the
// previous one, just used up (answered or out of attempts), has not yet
// expired.
var ErrOTPPending = domain.NewError(domain.KindRateLimited, "mfa.otp_pending",
	"The last code was just used. Please wait a few minutes before requesting a new one.")

// SendOTP mails a new one-time code, replacing any earlier one; it works
// for EmailOTPTTL. It is for the pending challenge of a password sign-in
// (challengeID, from the two_factor cookie) or, without one, for the
// signed-in user p (a step-up, or turning two-factor on by e-mail).
func (h *TwoFactor) SendOTP(ctx context.Context, challengeID string, p *usecase.Principal) error {
	if challengeID == "" && p != nil {
		return h.sendSessionOTP(ctx, *p)
	}
	if challengeID == "" {
		return ErrInvalidChallenge
	}
	idHash := []byte(domain.HashToken(challengeID))
	now := h.issuer.Clock.Now()
	c, err := h.challenges.Get(ctx, idHash, now)
	if errors.Is(err, domain.ErrNotFound) {
		return ErrInvalidChallenge
	} else if err != nil {
		return err
	}
	u, err := h.users.Get(ctx, c.UserID)
	if errors.Is(err, domain.ErrNotFound) {
		return ErrInvalidChallenge
	} else if err != nil {
		return err
	}
	code, err := domain.NewEmailOTP()
	if err != nil {
		return domain.Internal("two-factor: e-mailed code", err)
	}
	expires := now.Add(EmailOTPTTL)
	if expires.After(c.ExpiresAt) {
		expires = c.ExpiresAt
	}
	if err := h.challenges.SetOTP(ctx, idHash, []byte(domain.HashToken(code)), expires, now); errors.Is(err, domain.ErrNotFound) {
		return ErrInvalidChallenge
	} else if err != nil {
		return err
	}
	return h.mailer.Send(ctx, domain.Mail{Kind: domain.MailTwoFactorCode, To: u.Email(), Name: u.Name(), Code: code, ExpiresIn: expires.Sub(now)})
}

// sessionOTPID is the id of the e-mailed-code challenge of the signed-in
// session p: bound to the user and the session, as Better Auth keys its
// code, and to when the session last proved a second factor, so that the
// code's use (which steps the session up, or rotates it) makes room for
// the next one, while a code used up by wrong answers blocks a new one
// until it expires. It is stored hashed like a sign-in challenge's random
// id, and never leaves the server.
func sessionOTPID(p usecase.Principal) []byte {
	at := p.Session.Authentication().SecondFactorAt
	return []byte(domain.HashToken(fmt.Sprintf("session-otp!%s!%s!%d", p.User.ID(), p.Session.ID(), domain.Timestamp(at).UnixMilli())))
}

// sendSessionOTP mails a code for the signed-in session p: a challenge
// bound to the user and the session, living EmailOTPTTL, holding the code's
// hash and counting wrong answers (at most usecase.MFAMaxAttempts). A new code
// replaces a live one; once one is used up, the next can be asked when it
// expires (ErrOTPPending until then), unless its use stepped the session
// up.
func (h *TwoFactor) sendSessionOTP(ctx context.Context, p usecase.Principal) error {
	u, now := p.User, h.issuer.Clock.Now()
	idHash := sessionOTPID(p)
	code, err := domain.NewEmailOTP()
	if err != nil {
		return domain.Internal("two-factor: e-mailed code", err)
	}
	codeHash, expires := []byte(domain.HashToken(code)), now.Add(EmailOTPTTL)
	err = h.challenges.SetOTP(ctx, idHash, codeHash, expires, now)
	if errors.Is(err, domain.ErrNotFound) {
		err = h.newSessionOTP(ctx, idHash, u.ID(), codeHash, now)
	}
	if err != nil {
		return err
	}
	return h.mailer.Send(ctx, domain.Mail{Kind: domain.MailTwoFactorCode, To: u.Email(), Name: u.Name(), Code: code, ExpiresIn: EmailOTPTTL})
}

// newSessionOTP stores the challenge of a session's code; an expired one
// in the way is purged first.
func (h *TwoFactor) newSessionOTP(ctx context.Context, idHash []byte, user domain.UserID, codeHash []byte, now time.Time) error {
	c, err := domain.NewMFAChallenge(idHash, user, now, now.Add(EmailOTPTTL), usecase.MFAMaxAttempts, false)
	if err != nil {
		return err
	}
	for try := 0; ; try++ {
		err = h.challenges.Create(ctx, c)
		if !errors.Is(err, domain.ErrMFAChallengeExists) || try > 0 {
			break
		}
		// The session's previous challenge is consumed or expired (SetOTP
		// found none live): an expired one goes, a consumed one waits.
		if _, err = h.challenges.DeleteExpired(ctx, now); err != nil {
			return err
		}
	}
	if errors.Is(err, domain.ErrMFAChallengeExists) {
		return ErrOTPPending
	} else if err != nil {
		return err
	}
	return h.challenges.SetOTP(ctx, idHash, codeHash, c.ExpiresAt, now)
}

// answerSessionOTP checks code against the signed-in session's e-mailed
// code: no live code is ErrOTPExpired, a wrong one is counted (the one
// that reaches usecase.MFAMaxAttempts is ErrTooManyAttempts and uses the code up),
// and the right one is used up.
func (h *TwoFactor) answerSessionOTP(ctx context.Context, p usecase.Principal, code string) error {
	idHash, now := sessionOTPID(p), h.issuer.Clock.Now()
	c, err := h.challenges.Get(ctx, idHash, now)
	if errors.Is(err, domain.ErrNotFound) {
		return ErrOTPExpired
	} else if err != nil {
		return err
	}
	if len(c.OTPHash) == 0 || !now.Before(c.OTPExpiresAt) {
		return ErrOTPExpired
	}
	if subtle.ConstantTimeCompare(c.OTPHash, []byte(domain.HashToken(code))) != 1 {
		n, err := h.challenges.RecordFailure(ctx, idHash, now)
		switch {
		case errors.Is(err, domain.ErrNotFound):
			return ErrOTPExpired
		case err != nil:
			return err
		case n >= usecase.MFAMaxAttempts:
			return ErrTooManyAttempts
		}
		return ErrInvalidCode
	}
	if _, err := h.challenges.Consume(ctx, idHash, now); errors.Is(err, domain.ErrNotFound) {
		return ErrOTPExpired
	} else if err != nil {
		return err
	}
	return nil
}

// VerifyOTP answers with the code SendOTP mailed: the challenge of a
// password sign-in, or the signed-in session's code, which steps the
// session up, and for a user with two-factor off turns it on (as Better
// Auth 1.7.25 does: the e-mailed code is then their second factor) and
// rotates the session. Without a live code it is ErrOTPExpired (not
// counted); a wrong code counts as any wrong answer (on the session path,
// towards the code's attempts and the user's lockout).
func (h *TwoFactor) VerifyOTP(ctx context.Context, cmd VerifySecondFactor) (*VerifySecondFactorResult, error) {
	if cmd.ChallengeID == "" && cmd.Principal != nil {
		p := *cmd.Principal
		return h.verify(ctx, cmd, ErrInvalidCode, func(u *domain.User, _ *domain.MFAChallenge) error {
			if err := h.answerSessionOTP(ctx, p, cmd.Code); err != nil || u.TwoFactorEnabled() {
				return err
			}
			return h.turnOn(ctx, u, cmd.Origin, domain.FactorEmailOTP)
		})
	}
	if cmd.ChallengeID == "" {
		return nil, ErrInvalidChallenge
	}
	cmd.Principal = nil
	return h.verify(ctx, cmd, ErrInvalidCode, func(_ *domain.User, c *domain.MFAChallenge) error {
		if len(c.OTPHash) == 0 || !h.issuer.Clock.Now().Before(c.OTPExpiresAt) {
			return ErrOTPExpired
		}
		if subtle.ConstantTimeCompare(c.OTPHash, []byte(domain.HashToken(cmd.Code))) != 1 {
			return ErrInvalidCode
		}
		return nil
	})
}

// verify runs answer on the session path or the challenge path. On both,
// the user's budget (factorBudget) refuses a locked user before the code
// is looked at, counts a wrong answer (wrong is the error that says so)
// towards the account lockout and forgets the failures at a right one. On
// the challenge path a wrong answer also counts on the challenge, the one
// that reaches usecase.MFAMaxAttempts is ErrTooManyAttempts and ends the
// challenge, and a right one consumes the challenge and starts the
// session.
func (h *TwoFactor) verify(ctx context.Context, cmd VerifySecondFactor, wrong error, answer func(u *domain.User, c *domain.MFAChallenge) error) (_ *VerifySecondFactorResult, err error) {
	if cmd.Principal != nil {
		u := cmd.Principal.User
		wasOn := u.TwoFactorEnabled()
		attempt, err := h.budget.take(ctx, u.ID())
		if err != nil {
			return nil, err
		}
		if err := h.budget.settle(ctx, attempt, answer(u, nil), wrong); err != nil {
			return nil, err
		}
		// The answer that turned two-factor on is an enrolment (audited by
		// turnOn), and the session is rotated (Better Auth 1.7.25), the new
		// one carrying the step-up.
		if !wasOn && u.TwoFactorEnabled() {
			r, err := h.rotate(ctx, *cmd.Principal, cmd.Client, domain.MethodOTP)
			if err != nil {
				return nil, err
			}
			if r == nil {
				return &VerifySecondFactorResult{User: u, Session: cmd.Principal.Session}, nil
			}
			return &VerifySecondFactorResult{User: u, Session: r.Session, Token: r.Token, Rotated: true}, nil
		}
		// A code answered in a session is a second factor proven now: it
		// steps the session up.
		s := *cmd.Principal.Session
		if err := h.proveInSession(ctx, &s, domain.MethodOTP, h.issuer.Clock.Now()); err != nil {
			return nil, err
		}
		return &VerifySecondFactorResult{User: u, Session: &s}, nil
	}
	// The challenge path finishes a sign-in: count it.
	defer func() { usecase.ObserveSignIn(ctx, h.observer, h.counter, ports.SignInSecondFactor, err) }()
	if cmd.ChallengeID == "" {
		return nil, ErrInvalidChallenge
	}
	idHash := []byte(domain.HashToken(cmd.ChallengeID))
	now := h.issuer.Clock.Now()
	c, err := h.challenges.Get(ctx, idHash, now)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, ErrInvalidChallenge
	} else if err != nil {
		return nil, err
	}
	u, err := h.users.Get(ctx, c.UserID)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, ErrInvalidChallenge
	} else if err != nil {
		return nil, err
	}
	attempt, err := h.budget.take(ctx, u.ID())
	if err != nil {
		return nil, err
	}
	outcome := answer(u, &c)
	if errors.Is(outcome, wrong) {
		return nil, h.fail(ctx, idHash, wrong)
	}
	if outcome == nil {
		if _, err := h.challenges.Consume(ctx, idHash, now); errors.Is(err, domain.ErrNotFound) {
			outcome = ErrInvalidChallenge
		} else if err != nil {
			outcome = err
		}
	}
	if err := h.budget.settle(ctx, attempt, outcome, wrong); err != nil {
		return nil, err
	}
	s, token, err := h.issuer.Start(ctx, u.ID(), c.RememberMe, cmd.Client,
		domain.SecondFactorAuthentication(domain.MethodOTP, now))
	if err != nil {
		return nil, err
	}
	res := &VerifySecondFactorResult{User: u, Session: s, Token: token, NewSession: true}
	if cmd.TrustDevice {
		if res.TrustToken, err = usecase.TrustBrowser(ctx, h.trust, h.issuer, u); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// fail counts a wrong answer on the challenge (the budget has counted it
// towards the lockout).
func (h *TwoFactor) fail(ctx context.Context, idHash []byte, wrong error) error {
	now := h.issuer.Clock.Now()
	n, err := h.challenges.RecordFailure(ctx, idHash, now)
	if errors.Is(err, domain.ErrNotFound) {
		return ErrInvalidChallenge
	} else if err != nil {
		return err
	}
	if n >= usecase.MFAMaxAttempts {
		return ErrTooManyAttempts
	}
	return wrong
}
