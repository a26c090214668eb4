package federation

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// The errors of a sign-in at a provider. Their codes are neutral; the
// framework turns them into Better Auth's ?error= codes.
var (
	ErrStateMissing      = domain.Invalid("federation.state_missing", "The callback carries no state")
	ErrStateMismatch     = domain.NewError(domain.KindUnauthenticated, "federation.state_mismatch", "The sign-in is unknown, used, expired or from another browser")
	ErrNoCode            = domain.Invalid("federation.no_code", "The callback carries no code")
	ErrIssuerMismatch    = domain.NewError(domain.KindUnauthenticated, "federation.issuer_mismatch", "The callback's issuer is not the provider's")
	ErrIssuerMissing     = domain.NewError(domain.KindUnauthenticated, "federation.issuer_missing", "The provider promises an issuer in its callback, and this one has none")
	ErrUpstreamDenied    = domain.NewError(domain.KindUnauthenticated, "federation.upstream_error", "The identity provider refused the sign-in")
	ErrEmailMissing      = domain.NewError(domain.KindUnauthenticated, "federation.email_not_found", "The identity provider gave no e-mail address")
	ErrAccountNotLinked  = domain.NewError(domain.KindUnauthenticated, "federation.account_not_linked", "Account not linked: sign in and link it first")
	ErrLinkFailed        = domain.NewError(domain.KindUnauthenticated, "federation.link_failed", "Unable to link account")
	ErrLinkEmailMismatch = domain.NewError(domain.KindUnauthenticated, "federation.link_email_mismatch", "The account's e-mail address is not the signed-in user's")
	ErrLinkedElsewhere   = domain.NewError(domain.KindConflict, "federation.linked_to_another_user", "The account is already linked to a different user")
	ErrIDTokenNotAllowed = domain.NewError(domain.KindNotFound, "federation.id_token_not_supported", "id_token not supported")
	// ErrUnverifiedEmail refuses to make a user of an address the provider
	// has not verified: whoever verified it later would share the account
	// with the upstream identity.
	ErrUnverifiedEmail = domain.NewError(domain.KindForbidden, "federation.email_not_verified", "The identity provider has not verified this address")
)

// upstreamErrors are the error codes a provider's callback may carry (RFC
// 6749 §4.1.2.1, OpenID Connect Core §3.1.2.6); anything else is reported
// as upstream_error, so a provider cannot write into the redirect.
var upstreamErrors = []string{
	"invalid_request", "unauthorized_client", "access_denied", "unsupported_response_type", "invalid_scope",
	"server_error", "temporarily_unavailable", "interaction_required", "login_required", "account_selection_required",
	"consent_required", "invalid_request_uri", "invalid_request_object", "request_not_supported",
	"request_uri_not_supported", "registration_not_supported",
}

// Settings are the federation's rules.
type Settings struct {
	Auth usecase.AuthSettings
}

// SignIns are the sign-in, link and callback use cases.
type SignIns struct {
	providers  ports.IdentityProviderRepository
	accounts   ports.LinkedAccountRepository
	states     ports.FederationStateRepository
	users      ports.UserRepository
	sessions   ports.SessionRepository
	challenges ports.MFAChallengeRepository
	client     ports.FederationClient
	sealer     ports.SecretSealer
	issuer     usecase.SessionIssuer
	links      usecase.LinkSender
	audit      usecase.Auditor
	settings   Settings
	logger     *slog.Logger
	router     *Router
	orgs       ports.OrganizationRepository
	sso        usecase.SSOGate
	counter    *usecase.SignInCounter // nil: sign-ins are not recorded
}

// CountSignIns makes the sign-ins at providers record their outcomes in c,
// from the moment the provider vouched for an identity (a bad state or a
// refusal at the provider is no sign-in of ours).
func (s *SignIns) CountSignIns(c *usecase.SignInCounter) *SignIns {
	usecase.MustHave(c)
	s.counter = c
	return s
}

// NewSignIns returns the sign-in use cases.
func NewSignIns(providers ports.IdentityProviderRepository, accounts ports.LinkedAccountRepository, states ports.FederationStateRepository,
	users ports.UserRepository, sessions ports.SessionRepository, verifications ports.VerificationRepository, challenges ports.MFAChallengeRepository,
	client ports.FederationClient, sealer ports.SecretSealer, mailer ports.Mailer, audit usecase.Auditor, tokens ports.TokenGenerator,
	ids ports.IDGenerator, clock ports.Clock, settings Settings, logger *slog.Logger, router *Router, orgs ports.OrganizationRepository) *SignIns {
	usecase.MustHave(providers, accounts, states, users, sessions, verifications, challenges, client, sealer, mailer, tokens, ids, clock, router, orgs)
	if logger == nil {
		logger = slog.Default()
	}
	return &SignIns{
		providers: providers, accounts: accounts, states: states, users: users, sessions: sessions, challenges: challenges,
		client: client, sealer: sealer, settings: settings, logger: logger, router: router, orgs: orgs,
		issuer: usecase.NewSessionIssuer(sessions, audit.Events(), tokens, ids, clock, settings.Auth.Sessions),
		links:  usecase.NewLinkSender(verifications, mailer, tokens, ids, clock, settings.Auth),
		audit:  audit,
		sso:    usecase.NewSSOGate(router, audit),
	}
}

// Start begins a sign-in (or, with Link, a link) at a provider.
type Start struct {
	Provider    string
	CallbackURL string
	ErrorURL    string
	NewUserURL  string
	Scopes      []string
	LoginHint   string
	// RequestSignUp is accepted (Better Auth's wire) and changes nothing:
	// every enabled provider may sign new users up.
	RequestSignUp bool
	// Link is the signed-in user the account is to join (link-social).
	Link *usecase.Principal
}

// Started is where to send the browser, and the state for its cookie.
type Started struct {
	URL   string
	State string
}

// stateSecrets are what a sign-in in flight keeps sealed.
type stateSecrets struct {
	Verifier string `json:"v"`
	Nonce    string `json:"n,omitempty"`
}

// maxScopes bounds the scopes a sign-in may ask for.
const maxScopes = 32

// Start records the sign-in in flight and returns the provider's
// authorization URL: PKCE S256, state, and for OpenID Connect a nonce.
func (s *SignIns) Start(ctx context.Context, in Start) (Started, error) {
	var (
		p   domain.IdentityProvider
		err error
	)
	// An address at a domain routed to an organization's provider signs in
	// there, whichever provider was asked for (enterprise SSO).
	if email, eerr := domain.NewEmail(in.LoginHint); eerr == nil && in.Link == nil {
		routed, ok, rerr := s.router.ForEmail(ctx, email)
		if rerr != nil {
			return Started{}, rerr
		}
		if ok {
			p = routed
		}
	}
	if p.ID == "" {
		if p, err = s.enabledProvider(ctx, in.Provider); err != nil {
			return Started{}, err
		}
	}
	if len(in.Scopes) > maxScopes {
		return Started{}, domain.Invalid("federation.invalid_scopes", "Too many scopes",
			domain.FieldViolation{Field: "scopes", Message: "must list at most 32 scopes"})
	}
	for i, sc := range in.Scopes {
		if sc == "" || len(sc) > 256 || strings.ContainsAny(sc, " \"\\") {
			return Started{}, domain.Invalid("federation.invalid_scopes", "Invalid scope",
				domain.FieldViolation{Field: "scopes[" + strconv.Itoa(i) + "]", Message: "must be a scope token"})
		}
	}
	up, err := s.upstream(p)
	if err != nil {
		return Started{}, err
	}
	now := s.issuer.Clock.Now()
	state := s.issuer.Tokens.NewToken()
	secrets := stateSecrets{Verifier: s.issuer.Tokens.NewSecret(64)}
	if p.Preset.IsOIDC() {
		secrets.Nonce = s.issuer.Tokens.NewToken()
	}
	hash := hashState(state)
	plain, err := json.Marshal(secrets)
	if err != nil {
		return Started{}, domain.Internal("federation: state secrets", err)
	}
	sealed, err := s.sealer.Seal(domain.SealFederationState, hex.EncodeToString(hash), plain)
	if err != nil {
		return Started{}, err
	}
	fs := domain.FederationState{IDHash: hash, ProviderID: p.ID, SealedSecrets: sealed, CallbackURL: in.CallbackURL,
		ErrorURL: in.ErrorURL, NewUserURL: in.NewUserURL, RequestSignUp: in.RequestSignUp, ExpiresAt: now.Add(domain.FederationStateTTL)}
	if in.Link != nil {
		fs.LinkUserID, fs.LinkSessionID = in.Link.User.ID(), in.Link.Session.ID()
	}
	if fs, err = domain.NewFederationState(fs, now); err != nil {
		return Started{}, err
	}
	url, err := s.client.AuthorizationURL(ctx, up, ports.UpstreamAuthorization{State: state, Verifier: secrets.Verifier, Nonce: secrets.Nonce,
		RedirectURI: s.RedirectURI(p.ID), Scopes: in.Scopes, LoginHint: in.LoginHint})
	if err != nil {
		return Started{}, err
	}
	if err := s.states.Create(ctx, fs); err != nil {
		return Started{}, err
	}
	return Started{URL: url, State: state}, nil
}

// AuthorizationEndpoint is where a sign-in at p starts (for the hosted
// sign-in page's form-action), or "" when it cannot be known now.
func (s *SignIns) AuthorizationEndpoint(ctx context.Context, p domain.IdentityProvider) string {
	if p.Endpoints.Authorization != "" {
		return p.Endpoints.Authorization
	}
	up, err := s.upstream(p)
	if err != nil {
		return ""
	}
	md, err := s.client.Metadata(ctx, up)
	if err != nil {
		return ""
	}
	return md.AuthorizationEndpoint
}

// RedirectURI is the callback the provider sends the browser back to.
func (s *SignIns) RedirectURI(id domain.IdentityProviderID) string {
	return s.settings.Auth.FrameworkURL("/callback/"+string(id), nil)
}

// Callback is the provider's answer, as the browser brought it.
type Callback struct {
	Provider string
	State    string
	// StateCookie is the state in the browser's signed cookie ("" when it
	// sent none): the answer must come back to the browser that asked.
	StateCookie string
	Code        string
	Error       string
	// Issuer is the RFC 9207 iss parameter, HasIssuer whether it was sent.
	Issuer    string
	HasIssuer bool
	Client    usecase.Client
}

// CallbackResult is how a callback ended. ErrorURL is set as soon as the
// state is read (where the sign-in's errors go; "" is the default error
// page), even when the callback fails.
type CallbackResult struct {
	ErrorURL string
	// UpstreamError is the provider's own error code (an RFC 6749 one, or
	// "upstream_error"), with ErrUpstreamDenied.
	UpstreamError string

	User    *domain.User
	Session *domain.Session
	Token   string
	// TwoFactorChallenge is set instead of a session when the user has a
	// second factor and the provider did not assert one: the browser goes
	// on to the second-factor page.
	TwoFactorChallenge string
	// RedirectURL is where the browser goes after success.
	RedirectURL string
	NewUser     bool
	// Linked says a link-social ended: the account joined the signed-in
	// user and no session was started.
	Linked bool
}

// Callback finishes a sign-in or a link: the state is checked against the
// browser's cookie and used up, the issuer checked (RFC 9207), the code
// redeemed with the PKCE verifier, the ID token verified (nonce included),
// and the upstream identity tied to a user.
func (s *SignIns) Callback(ctx context.Context, in Callback) (CallbackResult, error) {
	var res CallbackResult
	if in.State == "" {
		return res, ErrStateMissing
	}
	if in.StateCookie == "" || subtle.ConstantTimeCompare([]byte(in.StateCookie), []byte(in.State)) != 1 {
		return res, ErrStateMismatch
	}
	now := s.issuer.Clock.Now()
	hash := hashState(in.State)
	fs, err := s.states.Consume(ctx, hash, now)
	if errors.Is(err, domain.ErrFederationStateNotFound) {
		return res, ErrStateMismatch
	}
	if err != nil {
		return res, err
	}
	res.ErrorURL = fs.ErrorURL
	if string(fs.ProviderID) != in.Provider {
		return res, ErrStateMismatch
	}
	if in.Error != "" {
		res.UpstreamError = "upstream_error"
		if slices.Contains(upstreamErrors, in.Error) {
			res.UpstreamError = in.Error
		}
		return res, ErrUpstreamDenied
	}
	if in.Code == "" {
		return res, ErrNoCode
	}
	p, err := s.enabledProvider(ctx, in.Provider)
	if err != nil {
		return res, err
	}
	up, err := s.upstream(p)
	if err != nil {
		return res, err
	}
	if err := s.checkIssuer(ctx, up, in); err != nil {
		return res, err
	}
	plain, err := s.sealer.Open(domain.SealFederationState, hex.EncodeToString(hash), fs.SealedSecrets)
	if err != nil {
		return res, err
	}
	var secrets stateSecrets
	if err := json.Unmarshal(plain, &secrets); err != nil {
		return res, domain.Internal("federation: state secrets", err)
	}
	id, tokens, err := s.client.Exchange(ctx, up, in.Code, secrets.Verifier, s.RedirectURI(p.ID), secrets.Nonce)
	if err != nil {
		return res, err
	}
	if fs.LinkUserID != "" {
		if err := s.linkTo(ctx, p, fs, id, tokens); err != nil {
			return res, err
		}
		res.Linked, res.RedirectURL = true, fs.CallbackURL
		return res, nil
	}
	if err := s.signIn(ctx, p, id, tokens, in.Client, &res); err != nil {
		return res, err
	}
	res.RedirectURL = fs.CallbackURL
	if res.NewUser && fs.NewUserURL != "" {
		res.RedirectURL = fs.NewUserURL
	}
	return res, nil
}

// checkIssuer applies RFC 9207: an iss parameter must be the provider's
// issuer, and a provider that promises one must send it.
func (s *SignIns) checkIssuer(ctx context.Context, up ports.UpstreamProvider, in Callback) error {
	if !up.Provider.Preset.IsOIDC() {
		if in.HasIssuer {
			return ErrIssuerMismatch // GitHub sends none; whoever sent one is not GitHub
		}
		return nil
	}
	md, err := s.client.Metadata(ctx, up)
	if err != nil {
		return err
	}
	if in.HasIssuer {
		if subtle.ConstantTimeCompare([]byte(in.Issuer), []byte(md.Issuer)) != 1 {
			return ErrIssuerMismatch
		}
		return nil
	}
	if md.IssuerInResponse {
		return ErrIssuerMissing
	}
	return nil
}

// IDTokenSignIn is a native app's sign-in with an ID token it got from the
// provider itself.
type IDTokenSignIn struct {
	Provider     string
	IDToken      string
	Nonce        string
	AccessToken  string
	RefreshToken string
	ExpiresAt    time.Time
	Client       usecase.Client
}

// SignInWithIDToken verifies the ID token (signature, iss, aud, exp, and the
// nonce when given) and signs its subject in as a callback would.
func (s *SignIns) SignInWithIDToken(ctx context.Context, in IDTokenSignIn) (CallbackResult, error) {
	var res CallbackResult
	p, err := s.enabledProvider(ctx, in.Provider)
	if err != nil {
		return res, err
	}
	if !p.Preset.IsOIDC() {
		return res, ErrIDTokenNotAllowed
	}
	up, err := s.upstream(p)
	if err != nil {
		return res, err
	}
	id, err := s.client.VerifyIDToken(ctx, up, in.IDToken, in.Nonce)
	if err != nil {
		return res, err
	}
	tokens := ports.UpstreamTokens{IDToken: in.IDToken, AccessToken: in.AccessToken, RefreshToken: in.RefreshToken, AccessTokenExpiresAt: in.ExpiresAt}
	err = s.signIn(ctx, p, id, tokens, in.Client, &res)
	return res, err
}

// signIn is startSignIn, its outcome counted: a second factor asked for is
// counted when it is answered.
func (s *SignIns) signIn(ctx context.Context, p domain.IdentityProvider, id ports.UpstreamIdentity, tokens ports.UpstreamTokens, c usecase.Client, res *CallbackResult) error {
	err := s.startSignIn(ctx, p, id, tokens, c, res)
	if err == nil && res.TwoFactorChallenge != "" {
		s.counter.Count(ctx, ports.SignInSecondFactorRequired)
	} else {
		s.counter.Count(ctx, usecase.SignInOutcome(err))
	}
	return err
}

// startSignIn ties id to a user (its linked account, or a user of its
// verified address when linking is allowed, or a new user) and starts a
// session.
func (s *SignIns) startSignIn(ctx context.Context, p domain.IdentityProvider, id ports.UpstreamIdentity, tokens ports.UpstreamTokens, c usecase.Client, res *CallbackResult) error {
	if err := domain.CheckSubject(id.Subject); err != nil {
		return err
	}
	now := s.issuer.Clock.Now()
	if p.OrganizationID != "" {
		// An organization's provider speaks only for the addresses of its
		// verified domains, at every sign-in.
		email, err := domain.NewEmail(id.Email)
		if err != nil {
			return ErrEmailMissing
		}
		if ok, err := s.routedHere(ctx, p, email); err != nil {
			return err
		} else if !ok {
			s.record(ctx, "", "federation.refuse-email-outside-domains", p.ID, ErrEmailOutsideRoute)
			return ErrEmailOutsideRoute
		}
	}
	acct, err := s.accounts.GetBySubject(ctx, p.ID, id.Subject)
	switch {
	case err == nil:
		res.User, err = s.users.Get(ctx, acct.UserID)
		if err != nil {
			return err
		}
		// An address whose organization requires its provider signs in
		// there only, whatever other account it has linked.
		if err := s.sso.Check(ctx, res.User.Email(), p.ID, res.User.ID(), "sign-in.sso-required"); err != nil {
			return err
		}
		if err := s.refreshAccount(ctx, acct, id, tokens); err != nil {
			return err
		}
	case errors.Is(err, domain.ErrLinkedAccountNotFound):
		if res.User, res.NewUser, err = s.firstSignIn(ctx, p, id, tokens, now); err != nil {
			return err
		}
	default:
		return err
	}
	u := res.User
	if u.IsBanned(now) {
		return usecase.ErrBannedUser
	}
	if s.settings.Auth.RequireEmailVerification && !u.EmailVerified() {
		if err := s.links.Send(ctx, domain.MailVerifyEmail, domain.PurposeVerifyEmail, u, u.Email(), func(token string) string {
			return s.settings.Auth.VerifyEmailLink(token, "")
		}); err != nil {
			return err
		}
		return usecase.ErrEmailNotVerified
	}
	if err := s.provision(ctx, p, u); err != nil {
		return err
	}
	auth := FederatedAuthentication(id.AMR, now)
	if u.TwoFactorEnabled() && !auth.HasSecondFactor() {
		res.TwoFactorChallenge, err = usecase.StartMFAChallenge(ctx, s.challenges, s.issuer.Tokens, now, u.ID(), true)
		return err
	}
	res.Session, res.Token, err = s.issuer.Start(ctx, u.ID(), true, c, auth)
	return err
}

// FederatedAuthentication is a sign-in at a provider whose ID token said amr:
// the methods it names that RFC 8176 registers are recorded; its "mfa"
// counts as a second factor proven at at. A provider that says nothing
// leaves a single-factor session.
func FederatedAuthentication(amr []string, at time.Time) domain.Authentication {
	var a domain.Authentication
	for _, m := range amr {
		if !slices.Contains(rfc8176, m) || slices.Contains(a.Methods, domain.AuthMethod(m)) {
			continue
		}
		a.Methods = append(a.Methods, domain.AuthMethod(m))
	}
	if slices.Contains(a.Methods, domain.MethodMultiFactor) {
		a.SecondFactorAt = domain.Timestamp(at)
	}
	return a
}

// rfc8176 lists the authentication method reference values RFC 8176
// registers.
var rfc8176 = []string{"face", "fpt", "geo", "hwk", "iris", "kba", "mca", "mfa", "otp", "pin", "pop", "pwd", "rba", "retina", "sc", "sms", "swk", "tel", "user", "vbm", "wia"}

// firstSignIn handles an upstream identity seen for the first time: it
// joins the user of its address when linking is allowed, or becomes a new
// user. A user of that address who may not be joined is ErrAccountNotLinked.
func (s *SignIns) firstSignIn(ctx context.Context, p domain.IdentityProvider, id ports.UpstreamIdentity, tokens ports.UpstreamTokens, now time.Time) (*domain.User, bool, error) {
	if id.Email == "" {
		return nil, false, ErrEmailMissing
	}
	email, err := domain.NewEmail(id.Email)
	if err != nil {
		return nil, false, ErrEmailMissing
	}
	// Neither joined to the user of an address whose organization requires
	// its provider, nor made a new user of it, through another provider.
	if err := s.sso.Check(ctx, email, p.ID, "", "sign-in.sso-required"); err != nil {
		return nil, false, err
	}
	existing, err := s.users.GetByEmail(ctx, email)
	switch {
	case err == nil:
		// Joining by address needs all three: a provider trusted to link,
		// its word that the address is verified, and the local address
		// verified (else whoever registered it first, unverified, would
		// gain the upstream identity: pre-account takeover).
		// An organization's provider is trusted for the addresses of its
		// verified domains (checked by signIn): the organization proved it
		// holds them.
		vouched := p.OrganizationID != "" || p.TrustedForLinking && id.EmailVerified
		if !vouched || !existing.EmailVerified() {
			// The user may be this identity's own, made a moment ago by a
			// racing first sign-in: then its account exists now.
			return s.lostRace(ctx, p, id)
		}
		err := s.linked(ctx, existing.ID(), p.ID, func(ctx context.Context, emit usecase.Emit) error {
			a, err := s.createAccount(ctx, p, existing.ID(), id, tokens, now)
			if err == nil {
				emit(domain.EventAccountLinked, a)
			}
			return err
		})
		if errors.Is(err, domain.ErrConflict) {
			return s.lostRace(ctx, p, id)
		} else if err != nil {
			return nil, false, err
		}
		return existing, false, nil
	case !errors.Is(err, domain.ErrNotFound):
		return nil, false, err
	}
	// A new user's address must be verified by the provider (or be at an
	// organization's verified domain): an account made of an address its
	// holder never proved would pass to them, with the upstream identity
	// still linked, once they verified it (Better Auth creates it).
	if !id.EmailVerified && p.OrganizationID == "" {
		return nil, false, ErrUnverifiedEmail
	}
	u, err := domain.NewUser(domain.UserID(s.issuer.IDs.NewID()), profileName(id, email), email, now)
	if err != nil {
		return nil, false, err
	}
	// A provider's picture that is no http or https URL is dropped: it
	// does not stop the sign-in.
	_ = u.SetImage(id.Image, now)
	if id.EmailVerified || p.OrganizationID != "" {
		u.MarkEmailVerified(now)
	}
	a, err := s.newAccount(p, u.ID(), id, tokens, now)
	if err != nil {
		return nil, false, err
	}
	// The user and their way in, both or neither.
	err = s.linked(ctx, u.ID(), p.ID, func(ctx context.Context, emit usecase.Emit) error {
		if err := s.accounts.CreateWithUser(ctx, u, a); err != nil {
			return err
		}
		emit(domain.EventUserCreated, u)
		emit(domain.EventAccountLinked, a)
		return nil
	})
	if errors.Is(err, domain.ErrConflict) {
		return s.lostRace(ctx, p, id)
	} else if err != nil {
		return nil, false, err
	}
	return u, true, nil
}

// linked runs change, which links an account of provider to user, with the
// events it emits and the success entry of account.link, in one unit of
// work. A failure is not recorded: the caller may retry another way.
func (s *SignIns) linked(ctx context.Context, user domain.UserID, provider domain.IdentityProviderID, change func(ctx context.Context, emit usecase.Emit) error) error {
	return s.audit.Events().Do(ctx, func(ctx context.Context, emit usecase.Emit) error {
		if err := change(ctx, emit); err != nil {
			return err
		}
		return s.audit.Succeeded(ctx, usecase.Actor{Type: domain.ActorUser, ID: string(user)}, "account.link",
			usecase.Target{Type: "identity_provider", ID: string(provider)})
	})
}

// accountEmail is the address an account keeps of the upstream's: the
// normalised address, or "" when it is not one.
func accountEmail(raw string) string {
	e, err := domain.NewEmail(raw)
	if err != nil {
		return ""
	}
	return string(e)
}

// profileName is the upstream name, or the address's local part.
func profileName(id ports.UpstreamIdentity, email domain.Email) string {
	name := strings.TrimSpace(id.Name)
	if name == "" || len(name) > 256 || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) || domain.HasBidiControl(name) {
		name, _, _ = strings.Cut(string(email), "@")
	}
	return name
}

// linkTo joins id to the state's signed-in user (link-social's callback):
// account.linked, audited as account.link.
func (s *SignIns) linkTo(ctx context.Context, p domain.IdentityProvider, fs domain.FederationState, id ports.UpstreamIdentity, tokens ports.UpstreamTokens) error {
	t := usecase.Target{Type: "identity_provider", ID: string(p.ID)}
	return s.audit.Change(ctx, usecase.Actor{Type: domain.ActorUser, ID: string(fs.LinkUserID)}, "account.link", &t,
		func(ctx context.Context, emit usecase.Emit) error {
			if err := domain.CheckSubject(id.Subject); err != nil {
				return err
			}
			now := s.issuer.Clock.Now()
			sess, err := s.sessions.Get(ctx, fs.LinkSessionID)
			if err != nil || sess.UserID() != fs.LinkUserID || sess.IsExpired(now) {
				return ErrLinkFailed
			}
			u, err := s.users.Get(ctx, fs.LinkUserID)
			if err != nil {
				return ErrLinkFailed
			}
			return s.link(ctx, p, u, id, tokens, now, emit)
		})
}

// link joins id to u: the provider must say the address is verified unless
// it is trusted, and it must be u's address; an identity of another user is
// refused, and u's own is refreshed.
func (s *SignIns) link(ctx context.Context, p domain.IdentityProvider, u *domain.User, id ports.UpstreamIdentity, tokens ports.UpstreamTokens, now time.Time,
	emit usecase.Emit) error {
	acct, err := s.accounts.GetBySubject(ctx, p.ID, id.Subject)
	if err == nil {
		if acct.UserID != u.ID() {
			return ErrLinkedElsewhere
		}
		return s.refreshAccount(ctx, acct, id, tokens)
	}
	if !errors.Is(err, domain.ErrLinkedAccountNotFound) {
		return err
	}
	if !id.EmailVerified && !p.TrustedForLinking {
		return ErrLinkFailed
	}
	if !strings.EqualFold(strings.TrimSpace(id.Email), string(u.Email())) {
		return ErrLinkEmailMismatch
	}
	a, err := s.createAccount(ctx, p, u.ID(), id, tokens, now)
	if errors.Is(err, domain.ErrLinkedAccountExists) {
		return ErrLinkedElsewhere
	}
	if err != nil {
		return err
	}
	emit(domain.EventAccountLinked, a)
	return nil
}

// lostRace answers a first sign-in whose user or account another sign-in
// of the same upstream identity created first (two tabs, a double click):
// that one's account, committed whole, signs this one in too. Otherwise
// the address belongs to someone else.
func (s *SignIns) lostRace(ctx context.Context, p domain.IdentityProvider, id ports.UpstreamIdentity) (*domain.User, bool, error) {
	acct, err := s.accounts.GetBySubject(ctx, p.ID, id.Subject)
	if errors.Is(err, domain.ErrLinkedAccountNotFound) {
		return nil, false, ErrAccountNotLinked
	}
	if err != nil {
		return nil, false, err
	}
	u, err := s.users.Get(ctx, acct.UserID)
	return u, false, err
}

// createAccount stores a new linked account with its tokens sealed.
func (s *SignIns) createAccount(ctx context.Context, p domain.IdentityProvider, user domain.UserID, id ports.UpstreamIdentity, tokens ports.UpstreamTokens, now time.Time) (domain.LinkedAccount, error) {
	a, err := s.newAccount(p, user, id, tokens, now)
	if err != nil {
		return domain.LinkedAccount{}, err
	}
	return a, s.accounts.Create(ctx, a)
}

// newAccount is a new linked account of user with its tokens sealed.
func (s *SignIns) newAccount(p domain.IdentityProvider, user domain.UserID, id ports.UpstreamIdentity, tokens ports.UpstreamTokens, now time.Time) (domain.LinkedAccount, error) {
	a := domain.LinkedAccount{ID: domain.LinkedAccountID(s.issuer.IDs.NewID()), UserID: user, ProviderID: p.ID, Subject: id.Subject,
		Email: accountEmail(id.Email), Scopes: scopesOf(tokens, p), AccessTokenExpiresAt: tokens.AccessTokenExpiresAt,
		RefreshTokenExpiresAt: tokens.RefreshTokenExpiresAt}
	sealed, err := sealTokens(s.sealer, a.ID, tokens)
	if err != nil {
		return domain.LinkedAccount{}, err
	}
	a.SealedTokens = sealed
	if a, err = domain.NewLinkedAccount(a, now); err != nil {
		return domain.LinkedAccount{}, err
	}
	return a, nil
}

// refreshAccount stores the tokens and address of a sign-in with a known
// account.
func (s *SignIns) refreshAccount(ctx context.Context, acct domain.LinkedAccount, id ports.UpstreamIdentity, tokens ports.UpstreamTokens) error {
	return s.accounts.Update(ctx, acct.UserID, acct.ID, func(a *domain.LinkedAccount) error {
		if old, err := openTokens(s.sealer, a.ID, a.SealedTokens); err == nil && tokens.RefreshToken == "" {
			tokens.RefreshToken, tokens.RefreshTokenExpiresAt = old.RefreshToken, old.RefreshTokenExpiresAt
		}
		sealed, err := sealTokens(s.sealer, a.ID, tokens)
		if err != nil {
			return err
		}
		a.SealedTokens = sealed
		if e := accountEmail(id.Email); e != "" {
			a.Email = e
		}
		a.Scopes = mergeScopes(a.Scopes, tokens.Scopes)
		a.AccessTokenExpiresAt, a.RefreshTokenExpiresAt = stamp(tokens.AccessTokenExpiresAt), stamp(tokens.RefreshTokenExpiresAt)
		a.UpdatedAt = s.issuer.Clock.Now()
		return nil
	})
}

// record audits a change to user's linked accounts.
func (s *SignIns) record(ctx context.Context, user domain.UserID, action string, provider domain.IdentityProviderID, err error) {
	_ = s.audit.Record(ctx, usecase.Actor{Type: domain.ActorUser, ID: string(user)}, action,
		usecase.Target{Type: "identity_provider", ID: string(provider)}, err)
}

// enabledProvider returns provider id if it exists and is enabled; any
// other is not found.
func (s *SignIns) enabledProvider(ctx context.Context, id string) (domain.IdentityProvider, error) {
	return enabledProvider(ctx, s.providers, id)
}

func enabledProvider(ctx context.Context, providers ports.IdentityProviderRepository, id string) (domain.IdentityProvider, error) {
	pid, err := domain.ParseIdentityProviderID(id, "provider")
	if err != nil {
		return domain.IdentityProvider{}, domain.ErrIdentityProviderNotFound
	}
	p, err := providers.Get(ctx, pid)
	if err != nil {
		return domain.IdentityProvider{}, err
	}
	if !p.Enabled {
		return domain.IdentityProvider{}, domain.ErrIdentityProviderNotFound
	}
	return p, nil
}

// upstream opens p's client secret.
func (s *SignIns) upstream(p domain.IdentityProvider) (ports.UpstreamProvider, error) {
	return openProvider(s.sealer, p)
}

func openProvider(sealer ports.SecretSealer, p domain.IdentityProvider) (ports.UpstreamProvider, error) {
	secret, err := sealer.Open(domain.SealIdentityProviderSecret, string(p.ID), p.SealedClientSecret)
	if err != nil {
		return ports.UpstreamProvider{}, err
	}
	return ports.UpstreamProvider{Provider: p, ClientSecret: string(secret)}, nil
}

// hashState is the stored form of a state parameter.
func hashState(state string) []byte {
	sum := sha256.Sum256([]byte(state))
	return sum[:]
}

// sealedTokens is the sealed form of an account's tokens.
type sealedTokens struct {
	Access  string `json:"a,omitempty"`
	Refresh string `json:"r,omitempty"`
	ID      string `json:"i,omitempty"`
}

func sealTokens(sealer ports.SecretSealer, id domain.LinkedAccountID, t ports.UpstreamTokens) ([]byte, error) {
	plain, err := json.Marshal(sealedTokens{Access: t.AccessToken, Refresh: t.RefreshToken, ID: t.IDToken})
	if err != nil {
		return nil, domain.Internal("federation: seal tokens", err)
	}
	return sealer.Seal(domain.SealLinkedAccountTokens, string(id), plain)
}

// openTokens opens an account's tokens; the expiries come from the
// account's columns.
func openTokens(sealer ports.SecretSealer, id domain.LinkedAccountID, sealed []byte) (ports.UpstreamTokens, error) {
	if len(sealed) == 0 {
		return ports.UpstreamTokens{}, nil
	}
	plain, err := sealer.Open(domain.SealLinkedAccountTokens, string(id), sealed)
	if err != nil {
		return ports.UpstreamTokens{}, err
	}
	var t sealedTokens
	if err := json.Unmarshal(plain, &t); err != nil {
		return ports.UpstreamTokens{}, domain.Internal("federation: open tokens", err)
	}
	return ports.UpstreamTokens{AccessToken: t.Access, RefreshToken: t.Refresh, IDToken: t.ID}, nil
}

// scopesOf is what the provider granted, or else what was asked.
func scopesOf(t ports.UpstreamTokens, p domain.IdentityProvider) []string {
	if len(t.Scopes) > 0 {
		return slices.Clone(t.Scopes)
	}
	return slices.Clone(p.Scopes)
}

func mergeScopes(have, more []string) []string {
	out := slices.Clone(have)
	for _, s := range more {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func stamp(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return domain.Timestamp(t)
}
