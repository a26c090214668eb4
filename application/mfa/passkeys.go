package mfa

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Passkeys (WebAuthn credentials, @better-auth/passkey's wire): a signed-in
// user registers one; anyone signs in with one (a discoverable credential),
// and a signed-in user proves one again to step the session up. Each
// ceremony has a challenge that lives PasskeyChallengeTTL and is used once;
// its id travels in a signed cookie and only its hash is stored. User
// verification is required in both ceremonies, and a sign counter that does
// not advance on a credential that cannot be synced is refused.

// PasskeyChallengeTTL is how long a WebAuthn challenge lives (Better Auth:
// 300 s, the challenge cookie's Max-Age).
const PasskeyChallengeTTL = 5 * time.Minute

// passkeyCeremonyTimeout is the timeout the browser is given (Better Auth's
// options say 60000 ms).
const passkeyCeremonyTimeout = time.Minute

// passkeyNameMax is the longest passkey name, in characters.
const passkeyNameMax = 255

// The errors of passkeys.
var (
	ErrPasskeyChallenge      = domain.Invalid("passkey.challenge_not_found", "Challenge not found")
	ErrPasskeyNotAllowed     = domain.NewError(domain.KindUnauthenticated, "passkey.not_allowed", "You are not allowed to register this passkey")
	ErrPasskeyRegistration   = domain.Invalid("passkey.registration_failed", "Failed to verify registration")
	ErrPasskeyAuthentication = domain.NewError(domain.KindUnauthenticated, "passkey.authentication_failed", "Authentication failed")
	ErrPasskeyUnknown        = domain.NewError(domain.KindUnauthenticated, "passkey.unknown", "Passkey not found")
	ErrPasskeysOff           = domain.NewError(domain.KindForbidden, "passkey.disabled",
		"Passkeys need a relying party id that is a domain name: set GATEHOUSE_BASE_URL or GATEHOUSE_PASSKEY_RP_ID to one")
	ErrPasskeyInvalidName = domain.Invalid("passkey.invalid_name", "A passkey's name is 1 to 255 characters",
		domain.FieldViolation{Field: "name", Message: "must be 1 to 255 characters, without direction controls (such as U+202E)"})
)

// PasskeySettings are the relying party: its id (a registrable domain the
// origins belong to), the name authenticators show, and the origins a
// ceremony may come from.
type PasskeySettings struct {
	RPID    string
	RPName  string
	Origins []string
}

// PasskeyOptions is a ceremony's options for the browser and the id of its
// challenge, for the challenge cookie.
type PasskeyOptions struct {
	ChallengeID string
	// Creation is set for a registration, Request for an authentication.
	Creation *protocol.PublicKeyCredentialCreationOptions
	Request  *protocol.PublicKeyCredentialRequestOptions
}

// PasskeyRegisterOptions asks for the options of a registration.
type PasskeyRegisterOptions struct {
	Principal usecase.Principal
	// Attachment is "platform", "cross-platform" or "" (any).
	Attachment string
}

// PasskeyVerifyRegistration answers a registration with the browser's
// RegistrationResponseJSON.
type PasskeyVerifyRegistration struct {
	Principal   usecase.Principal
	Actor       usecase.Actor
	ChallengeID string
	Response    []byte
	Name        string
}

// PasskeyVerifyAuthentication answers an authentication with the browser's
// AuthenticationResponseJSON. Principal is the current session, if any.
type PasskeyVerifyAuthentication struct {
	Principal   *usecase.Principal
	ChallengeID string
	Response    []byte
	Client      usecase.Client
}

// PasskeyAuthResult is the user and their session: a new one (NewSession)
// after a sign-in, the current one, stepped up, otherwise.
type PasskeyAuthResult struct {
	User       *domain.User
	Session    *domain.Session
	Token      string
	NewSession bool
}

// PasskeyChange renames or deletes one of the signed-in user's passkeys.
type PasskeyChange struct {
	Principal usecase.Principal
	Actor     usecase.Actor
	ID        []byte
	Name      string
}

// Passkeys is a user's passkeys: one method per use case of the plugin.
type Passkeys struct {
	users      ports.UserRepository
	passkeys   ports.PasskeyRepository
	challenges ports.WebAuthnChallengeRepository
	sessions   ports.SessionRepository
	issuer     usecase.SessionIssuer
	stepUp     usecase.StepUp
	audit      usecase.Auditor
	policy     domain.SessionPolicy
	rp         *webauthn.WebAuthn
	sso        usecase.SSOGate
	observer   ports.Observer         // nil: sign-ins are not counted
	counter    *usecase.SignInCounter // nil: nor recorded
}

// UseSSO refuses passkey sign-ins of the users whose address policy sends
// to their organization's identity provider, each refusal audited. A
// passkey still steps up a session that provider started.
func (h *Passkeys) UseSSO(policy usecase.SSOPolicy) *Passkeys {
	h.sso = usecase.NewSSOGate(policy, h.audit)
	return h
}

// NewPasskeys returns a Passkeys for the relying party of
// settings, or an error when settings cannot make one.
func NewPasskeys(users ports.UserRepository, passkeys ports.PasskeyRepository, challenges ports.WebAuthnChallengeRepository,
	sessions ports.SessionRepository, audit usecase.Auditor, tokens ports.TokenGenerator, ids ports.IDGenerator, clock ports.Clock,
	auth usecase.AuthSettings, settings PasskeySettings) (*Passkeys, error) {
	usecase.MustHave(users, passkeys, challenges, sessions, tokens, ids, clock)
	h := &Passkeys{users: users, passkeys: passkeys, challenges: challenges, sessions: sessions,
		issuer: usecase.NewSessionIssuer(sessions, audit.Events(), tokens, ids, clock, auth.Sessions),
		stepUp: usecase.NewStepUp(passkeys, clock, auth.StepUpWindow),
		audit:  audit, policy: auth.Sessions}
	if net.ParseIP(settings.RPID) != nil {
		// Development on a loopback address (the configuration refuses it
		// in production): browsers refuse an address as an RP ID, so the
		// ceremonies answer ErrPasskeysOff; stored passkeys can still be
		// listed and removed.
		return h, nil
	}
	timeout := webauthn.TimeoutConfig{Timeout: passkeyCeremonyTimeout, TimeoutUVD: passkeyCeremonyTimeout}
	rp, err := webauthn.New(&webauthn.Config{
		RPID: settings.RPID, RPDisplayName: settings.RPName, RPOrigins: settings.Origins,
		AttestationPreference: protocol.PreferNoAttestation,
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey: protocol.ResidentKeyRequirementRequired, RequireResidentKey: protocol.ResidentKeyRequired(),
			UserVerification: protocol.VerificationRequired,
		},
		// The challenge store enforces the lifetime, on the service's clock.
		Timeouts: webauthn.TimeoutsConfig{Login: timeout, Registration: timeout},
	})
	if err != nil {
		return nil, err
	}
	h.rp = rp
	return h, nil
}

// rpUser is a user as go-webauthn sees them: the user handle is the user id.
type rpUser struct {
	u     *domain.User
	creds []webauthn.Credential
}

func (r rpUser) WebAuthnID() []byte                         { return []byte(r.u.ID()) }
func (r rpUser) WebAuthnName() string                       { return string(r.u.Email()) }
func (r rpUser) WebAuthnDisplayName() string                { return string(r.u.Email()) }
func (r rpUser) WebAuthnCredentials() []webauthn.Credential { return r.creds }

// rpCredential is a stored passkey as go-webauthn sees it.
func rpCredential(c domain.PasskeyCredential) webauthn.Credential {
	transports := make([]protocol.AuthenticatorTransport, len(c.Transports))
	for i, t := range c.Transports {
		transports[i] = protocol.AuthenticatorTransport(t)
	}
	return webauthn.Credential{
		ID: c.ID, PublicKey: c.PublicKey, AttestationType: c.AttestationType, Transport: transports,
		Flags:         webauthn.CredentialFlags{UserPresent: true, UserVerified: true, BackupEligible: c.BackupEligible, BackupState: c.BackedUp},
		Authenticator: webauthn.Authenticator{AAGUID: c.AAGUID, SignCount: c.SignCount},
	}
}

func (h *Passkeys) rpUser(ctx context.Context, u *domain.User) (rpUser, error) {
	stored, err := h.passkeys.ListByUser(ctx, u.ID())
	if err != nil {
		return rpUser{}, err
	}
	r := rpUser{u: u, creds: make([]webauthn.Credential, len(stored))}
	for i, c := range stored {
		r.creds[i] = rpCredential(c)
	}
	return r, nil
}

// RegisterOptions starts a registration for the signed-in user, whose
// session must be fresh (as Better Auth's freshSessionMiddleware asks):
// their existing passkeys are excluded, a discoverable credential and user
// verification are required.
func (h *Passkeys) RegisterOptions(ctx context.Context, cmd PasskeyRegisterOptions) (*PasskeyOptions, error) {
	if h.rp == nil {
		return nil, ErrPasskeysOff
	}
	if !cmd.Principal.Session.IsFresh(h.issuer.Clock.Now(), h.policy) {
		return nil, usecase.ErrSessionNotFresh
	}
	u := cmd.Principal.User
	r, err := h.rpUser(ctx, u)
	if err != nil {
		return nil, err
	}
	opts := []webauthn.RegistrationOption{webauthn.WithExclusions(webauthn.Credentials(r.creds).CredentialDescriptors())}
	switch cmd.Attachment {
	case "":
	case string(protocol.Platform), string(protocol.CrossPlatform):
		sel := h.rp.Config.AuthenticatorSelection
		sel.AuthenticatorAttachment = protocol.AuthenticatorAttachment(cmd.Attachment)
		opts = append(opts, webauthn.WithAuthenticatorSelection(sel))
	default:
		return nil, domain.Invalid("passkey.invalid_attachment", "authenticatorAttachment is platform or cross-platform",
			domain.FieldViolation{Field: "authenticatorAttachment", Message: "must be platform or cross-platform"})
	}
	creation, session, err := h.rp.BeginRegistration(r, opts...)
	if err != nil {
		return nil, domain.Internal("passkey: begin registration", err)
	}
	id, err := h.saveChallenge(ctx, session, u.ID(), domain.WebAuthnRegistration)
	if err != nil {
		return nil, err
	}
	return &PasskeyOptions{ChallengeID: id, Creation: &creation.Response}, nil
}

// AuthenticateOptions starts an authentication. A signed-in user with
// passkeys is asked for one of theirs (allowCredentials), to step the
// session up; anyone else gets a discoverable ceremony, to sign in.
func (h *Passkeys) AuthenticateOptions(ctx context.Context, p *usecase.Principal) (*PasskeyOptions, error) {
	var (
		assertion *protocol.CredentialAssertion
		session   *webauthn.SessionData
		owner     domain.UserID
		err       error
	)
	if h.rp == nil {
		return nil, ErrPasskeysOff
	}
	if p != nil && p.User != nil {
		r, lerr := h.rpUser(ctx, p.User)
		if lerr != nil {
			return nil, lerr
		}
		if len(r.creds) > 0 {
			owner = p.User.ID()
			assertion, session, err = h.rp.BeginLogin(r)
		}
	}
	if owner == "" {
		assertion, session, err = h.rp.BeginDiscoverableLogin()
	}
	if err != nil {
		return nil, domain.Internal("passkey: begin login", err)
	}
	id, err := h.saveChallenge(ctx, session, owner, domain.WebAuthnAuthentication)
	if err != nil {
		return nil, err
	}
	return &PasskeyOptions{ChallengeID: id, Request: &assertion.Response}, nil
}

// saveChallenge stores the ceremony's session data under the hash of a new
// challenge id and returns the id.
func (h *Passkeys) saveChallenge(ctx context.Context, session *webauthn.SessionData, owner domain.UserID, purpose domain.WebAuthnPurpose) (string, error) {
	challenge, err := base64.RawURLEncoding.DecodeString(session.Challenge)
	if err != nil {
		return "", domain.Internal("passkey: challenge", err)
	}
	data, err := json.Marshal(session)
	if err != nil {
		return "", domain.Internal("passkey: session data", err)
	}
	id := h.issuer.Tokens.NewToken()
	now := h.issuer.Clock.Now()
	c, err := domain.NewWebAuthnChallenge([]byte(domain.HashToken(id)), challenge, owner, purpose, data, now, now.Add(PasskeyChallengeTTL))
	if err != nil {
		return "", err
	}
	if err := h.challenges.Create(ctx, c); err != nil {
		return "", err
	}
	return id, nil
}

// consume uses the challenge id once and returns its session data; an
// unknown, used, expired or other ceremony's challenge is
// ErrPasskeyChallenge.
func (h *Passkeys) consume(ctx context.Context, id string, purpose domain.WebAuthnPurpose) (domain.WebAuthnChallenge, webauthn.SessionData, error) {
	var session webauthn.SessionData
	if id == "" {
		return domain.WebAuthnChallenge{}, session, ErrPasskeyChallenge
	}
	c, err := h.challenges.Consume(ctx, []byte(domain.HashToken(id)), h.issuer.Clock.Now())
	if errors.Is(err, domain.ErrWebAuthnChallengeNotFound) {
		return c, session, ErrPasskeyChallenge
	} else if err != nil {
		return c, session, err
	}
	if c.Purpose != purpose {
		return c, session, ErrPasskeyChallenge
	}
	if err := json.Unmarshal(c.SessionData, &session); err != nil {
		return c, session, domain.Internal("passkey: stored session data", err)
	}
	return c, session, nil
}

// responseInvalid is a body.response the WebAuthn parser refuses.
func responseInvalid(err error) error {
	msg := "is not a WebAuthn credential"
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Details != "" {
		msg += ": " + pe.Details
	}
	return domain.Invalid("passkey.invalid_response", "The passkey response is malformed",
		domain.FieldViolation{Field: "response", Message: msg})
}

// VerifyRegistration checks the browser's answer to the signed-in user's
// registration challenge and stores the new passkey.
func (h *Passkeys) VerifyRegistration(ctx context.Context, cmd PasskeyVerifyRegistration) (domain.PasskeyCredential, error) {
	if h.rp == nil {
		return domain.PasskeyCredential{}, ErrPasskeysOff
	}
	if !cmd.Principal.Session.IsFresh(h.issuer.Clock.Now(), h.policy) {
		return domain.PasskeyCredential{}, usecase.ErrSessionNotFresh
	}
	u := cmd.Principal.User
	name := strings.TrimSpace(cmd.Name)
	if utf8.RuneCountInString(name) > passkeyNameMax || domain.HasBidiControl(name) {
		return domain.PasskeyCredential{}, ErrPasskeyInvalidName
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(cmd.Response)
	if err != nil {
		return domain.PasskeyCredential{}, responseInvalid(err)
	}
	c, session, err := h.consume(ctx, cmd.ChallengeID, domain.WebAuthnRegistration)
	if err != nil {
		return domain.PasskeyCredential{}, err
	}
	if c.UserID != u.ID() {
		return domain.PasskeyCredential{}, ErrPasskeyNotAllowed
	}
	r, err := h.rpUser(ctx, u)
	if err != nil {
		return domain.PasskeyCredential{}, err
	}
	cred, err := h.rp.CreateCredential(r, session, parsed)
	if err != nil {
		return domain.PasskeyCredential{}, ErrPasskeyRegistration
	}
	transports := make([]string, len(cred.Transport))
	for i, t := range cred.Transport {
		transports[i] = string(t)
	}
	pk, err := domain.NewPasskeyCredential(domain.PasskeyCredential{
		ID: cred.ID, UserID: u.ID(), Name: name, PublicKey: cred.PublicKey, SignCount: cred.Authenticator.SignCount,
		AAGUID: cred.Authenticator.AAGUID, Transports: transports, BackupEligible: cred.Flags.BackupEligible,
		BackedUp: cred.Flags.BackupState, AttestationType: cred.AttestationType, CreatedAt: h.issuer.Clock.Now(),
	})
	if err != nil {
		return domain.PasskeyCredential{}, err
	}
	t := passkeyTarget(pk.ID)
	err = h.audit.Change(ctx, cmd.Actor, "passkey.register", &t, func(ctx context.Context, emit usecase.Emit) error {
		if err := h.passkeys.Create(ctx, pk); err != nil {
			return err
		}
		emit(domain.EventFactorEnabled, passkeyChange(u.ID(), pk.ID))
		return nil
	})
	if err != nil {
		return domain.PasskeyCredential{}, err
	}
	return pk, nil
}

// passkeyChange is the data of a passkey's factor events.
func passkeyChange(user domain.UserID, id []byte) domain.FactorChange {
	return domain.FactorChange{UserID: user, Factor: domain.FactorPasskey, PasskeyID: base64.RawURLEncoding.EncodeToString(id)}
}

func passkeyTarget(id []byte) usecase.Target {
	return usecase.Target{Type: "passkey", ID: base64.RawURLEncoding.EncodeToString(id)}
}

// VerifyAuthentication checks the browser's answer to an authentication
// challenge. A discoverable ceremony signs the credential's owner in with a
// new session; a signed-in user's ceremony (allowCredentials) steps their
// current session up. The owner must not be banned, and the credential's
// counter must advance unless it can be synced.
func (h *Passkeys) VerifyAuthentication(ctx context.Context, cmd PasskeyVerifyAuthentication) (_ *PasskeyAuthResult, err error) {
	if h.rp == nil {
		return nil, ErrPasskeysOff
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(cmd.Response)
	if err != nil {
		return nil, responseInvalid(err)
	}
	c, session, err := h.consume(ctx, cmd.ChallengeID, domain.WebAuthnAuthentication)
	if err != nil {
		return nil, err
	}
	stored, err := h.passkeys.Get(ctx, parsed.RawID)
	if errors.Is(err, domain.ErrPasskeyNotFound) {
		return nil, ErrPasskeyUnknown
	} else if err != nil {
		return nil, err
	}
	stepUp := c.UserID != ""
	if !stepUp { // a sign-in, from here on: count it
		defer func() { usecase.ObserveSignIn(ctx, h.observer, h.counter, ports.SignInPasskey, err) }()
	}
	if stepUp && (stored.UserID != c.UserID || cmd.Principal == nil || cmd.Principal.User == nil || cmd.Principal.User.ID() != c.UserID) {
		return nil, ErrPasskeyAuthentication
	}
	u, err := h.users.Get(ctx, stored.UserID)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, ErrPasskeyUnknown
	} else if err != nil {
		return nil, err
	}
	r, err := h.rpUser(ctx, u)
	if err != nil {
		return nil, err
	}
	if stepUp {
		_, err = h.rp.ValidateLogin(r, session, parsed)
	} else {
		_, _, err = h.rp.ValidatePasskeyLogin(func(rawID, handle []byte) (webauthn.User, error) {
			if !bytes.Equal(rawID, stored.ID) {
				return nil, ErrPasskeyUnknown
			}
			return r, nil
		}, session, parsed)
	}
	if err != nil {
		return nil, ErrPasskeyAuthentication
	}
	now := h.issuer.Clock.Now()
	if err := h.advanceCounter(ctx, stored, parsed.Response.AuthenticatorData.Counter, now); err != nil {
		return nil, err
	}
	if u.IsBanned(now) {
		return nil, usecase.ErrBannedUser
	}
	synced := stored.BackupEligible
	if !stepUp {
		// Like a ban, only the passkey's holder learns of the requirement.
		if err := h.sso.Check(ctx, u.Email(), "", u.ID(), "sign-in.sso-required"); err != nil {
			return nil, err
		}
		s, token, err := h.issuer.Start(ctx, u.ID(), true, cmd.Client, domain.PasskeyAuthentication(synced, now))
		if err != nil {
			return nil, err
		}
		return &PasskeyAuthResult{User: u, Session: s, Token: token, NewSession: true}, nil
	}
	var stepped *domain.Session
	if err := h.sessions.Update(ctx, cmd.Principal.Session.ID(), func(s *domain.Session) error {
		s.ProvePasskey(synced, now)
		stepped = s
		return nil
	}); err != nil {
		return nil, err
	}
	return &PasskeyAuthResult{User: u, Session: stepped}, nil
}

// advanceCounter stores the authenticator's new sign counter. A counter
// that did not advance (unless both are zero: an authenticator without one)
// is refused on a credential that cannot be synced, since it suggests a
// cloned authenticator; a synced credential's counter is not meaningful
// across its copies and is left as it is.
func (h *Passkeys) advanceCounter(ctx context.Context, c domain.PasskeyCredential, next uint32, now time.Time) error {
	old := c.SignCount
	if (old > 0 || next > 0) && next <= old {
		if !c.BackupEligible {
			return domain.ErrPasskeyCounterRegressed
		}
		// The use is accepted; the counter stays (UpdateSignCount refuses
		// one that does not advance).
		return nil
	}
	return h.passkeys.UpdateSignCount(ctx, c.ID, old, next, now)
}

// List returns the signed-in user's passkeys, newest first.
func (h *Passkeys) List(ctx context.Context, p usecase.Principal) ([]domain.PasskeyCredential, error) {
	return h.passkeys.ListByUser(ctx, p.User.ID())
}

// Rename names one of the signed-in user's passkeys; another user's is
// domain.ErrPasskeyNotFound.
func (h *Passkeys) Rename(ctx context.Context, cmd PasskeyChange) (domain.PasskeyCredential, error) {
	name := strings.TrimSpace(cmd.Name)
	if name == "" || utf8.RuneCountInString(name) > passkeyNameMax || domain.HasBidiControl(name) {
		return domain.PasskeyCredential{}, ErrPasskeyInvalidName
	}
	u := cmd.Principal.User.ID()
	// Another user's passkey, or a missing one, is refused unaudited.
	if c, err := h.passkeys.Get(ctx, cmd.ID); err != nil {
		return domain.PasskeyCredential{}, err
	} else if c.UserID != u {
		return domain.PasskeyCredential{}, domain.ErrPasskeyNotFound
	}
	t := passkeyTarget(cmd.ID)
	err := h.audit.Change(ctx, cmd.Actor, "passkey.rename", &t, func(ctx context.Context, _ usecase.Emit) error {
		return h.passkeys.Rename(ctx, u, cmd.ID, name)
	})
	if err != nil {
		return domain.PasskeyCredential{}, err
	}
	c, err := h.passkeys.Get(ctx, cmd.ID)
	if err != nil {
		return domain.PasskeyCredential{}, err
	}
	return c, nil
}

// Delete removes one of the signed-in user's passkeys; another user's is
// domain.ErrPasskeyNotFound. Removing the last one is a sensitive action: a
// user with a second factor must have proven one recently (StepUp).
func (h *Passkeys) Delete(ctx context.Context, cmd PasskeyChange) error {
	u := cmd.Principal.User.ID()
	c, err := h.passkeys.Get(ctx, cmd.ID)
	if err != nil {
		return err
	}
	if c.UserID != u {
		return domain.ErrPasskeyNotFound
	}
	n, err := h.passkeys.CountByUser(ctx, u)
	if err != nil {
		return err
	}
	if n <= 1 {
		if err := h.stepUp.Require(ctx, cmd.Principal); err != nil {
			return err
		}
	}
	t := passkeyTarget(cmd.ID)
	return h.audit.Change(ctx, cmd.Actor, "passkey.delete", &t, func(ctx context.Context, emit usecase.Emit) error {
		if err := h.passkeys.Delete(ctx, u, cmd.ID); err != nil {
			return err
		}
		emit(domain.EventFactorDisabled, passkeyChange(u, cmd.ID))
		return nil
	})
}
