package domain

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Federation: signing in with an account at an upstream identity provider
// (Google, GitHub, a customer's OpenID provider). A provider is registered
// at runtime; an upstream identity is tied to a local user by a
// LinkedAccount keyed by (provider, subject), never by e-mail alone; a
// sign-in in flight is a FederationState, used once.

// IdentityProviderID names an upstream provider: the {providerId} of
// /api/auth/callback/{providerId} and the provider of sign-in/social. It is
// 1 to 64 characters of [a-z0-9-], starting with a letter or digit.
type IdentityProviderID string

// CredentialProviderID is the provider id Better Auth gives the e-mail and
// password account in list-accounts; no identity provider may take it.
const CredentialProviderID = "credential"

// identityProviderIDPattern is the shape of an IdentityProviderID.
var identityProviderIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// ParseIdentityProviderID checks a provider id given at location.
func ParseIdentityProviderID(s, location string) (IdentityProviderID, error) {
	if !identityProviderIDPattern.MatchString(s) || s == CredentialProviderID {
		return "", Invalid("identity_provider.invalid_id", "Invalid provider id",
			FieldViolation{Field: location, Message: `must be 1 to 64 characters of a-z, 0-9 and "-", and not "credential"`})
	}
	return IdentityProviderID(s), nil
}

// IdentityProviderPreset says which kind of provider it is, and so which
// defaults fill what the administrator left out.
type IdentityProviderPreset string

// The presets. Every one but GitHub speaks OpenID Connect; GitHub is plain
// OAuth 2 with its REST API for the profile and the verified primary
// e-mail.
const (
	PresetOIDC      IdentityProviderPreset = "oidc"
	PresetGoogle    IdentityProviderPreset = "google"
	PresetMicrosoft IdentityProviderPreset = "microsoft"
	PresetGitLab    IdentityProviderPreset = "gitlab"
	PresetGitHub    IdentityProviderPreset = "github"
)

// Presets lists every preset.
var Presets = []IdentityProviderPreset{PresetOIDC, PresetGoogle, PresetMicrosoft, PresetGitLab, PresetGitHub}

// IsOIDC reports whether the preset speaks OpenID Connect (discovery, ID
// tokens, nonce); GitHub does not.
func (p IdentityProviderPreset) IsOIDC() bool { return p != PresetGitHub }

// IdentityProviderEndpoints override where the provider is reached. Empty
// fields come from discovery (OpenID Connect) or the preset (GitHub).
type IdentityProviderEndpoints struct {
	Authorization string
	Token         string
	UserInfo      string
	JWKS          string
	// API is GitHub's REST API root (https://api.github.com).
	API string
}

// IdentityProvider is an upstream provider users sign in with. A provider
// of an organization (OrganizationID set) is that organization's enterprise
// SSO: sign-ins of addresses at its Domains are routed to it, new users
// join the organization with DefaultRole, and with RequireSSO those
// addresses may not sign in with a password.
type IdentityProvider struct {
	ID     IdentityProviderID
	Preset IdentityProviderPreset
	// Name is what the hosted sign-in page's button says.
	Name string
	// Issuer is the OpenID issuer; discovery is read from
	// Issuer/.well-known/openid-configuration. Empty for GitHub.
	Issuer    string
	ClientID  string
	Endpoints IdentityProviderEndpoints
	// SealedClientSecret is the client secret sealed under the service
	// secrets (purpose SealIdentityProviderSecret, id the provider's id); it
	// is never shown again.
	SealedClientSecret []byte
	Scopes             []string
	// TrustedForLinking lets a new upstream identity join the local user
	// with its e-mail address, when the provider also says the address is
	// verified. Otherwise the user links it explicitly, signed in.
	TrustedForLinking bool
	Enabled           bool

	OrganizationID OrganizationID
	Domains        []DomainID
	DefaultRole    OrgRole
	RequireSSO     bool

	CreatedAt time.Time
	UpdatedAt time.Time
}

// The purposes the federation's secrets are sealed for (ports.SecretSealer).
const (
	SealIdentityProviderSecret = "identity-provider-secret"
	SealLinkedAccountTokens    = "linked-account-tokens"
	SealFederationState        = "federation-state"
)

// Bounds of a provider's registration.
const (
	MaxIdentityProviderNameLength = 128
	MaxIdentityProviderScopes     = 32
	MaxIdentityProviderURLLength  = 2048
	MaxIdentityProviderDomains    = 50
	maxClientIDLength             = 512
	maxScopeLength                = 256
)

// The preset defaults (endpoints and scopes a preset fills in).
var presetDefaults = map[IdentityProviderPreset]struct {
	issuer    string
	endpoints IdentityProviderEndpoints
	scopes    []string
	name      string
}{
	PresetOIDC:      {scopes: []string{"openid", "email", "profile"}},
	PresetGoogle:    {issuer: "https://accounts.google.com", scopes: []string{"openid", "email", "profile"}, name: "Google"},
	PresetMicrosoft: {scopes: []string{"openid", "email", "profile"}, name: "Microsoft"},
	PresetGitLab:    {issuer: "https://gitlab.com", scopes: []string{"openid", "email", "profile"}, name: "GitLab"},
	PresetGitHub: {endpoints: IdentityProviderEndpoints{ // #nosec G101 -- GitHub's public endpoint URLs, no credentials
		Authorization: "https://github.com/login/oauth/authorize",
		Token:         "https://github.com/login/oauth/access_token",
		API:           "https://api.github.com",
	}, scopes: []string{"read:user", "user:email"}, name: "GitHub"},
}

// NewIdentityProvider checks p, fills what its preset provides (issuer,
// GitHub's endpoints, scopes, name), and returns the checked copy with its
// times set to now; p itself is not changed. Field violations name the JSON
// fields (issuer, clientId, endpoints.token, …).
func NewIdentityProvider(p IdentityProvider, now time.Time) (IdentityProvider, error) {
	p.CreatedAt, p.UpdatedAt = Timestamp(now), Timestamp(now)
	return checkIdentityProvider(p)
}

// ReviseIdentityProvider checks p, a stored provider with fields changed,
// as NewIdentityProvider does, and returns the checked copy updated at now
// (its creation time kept); p itself is not changed.
func ReviseIdentityProvider(p IdentityProvider, now time.Time) (IdentityProvider, error) {
	p.UpdatedAt = now
	return checkIdentityProvider(p)
}

// checkIdentityProvider returns p checked, with its preset's defaults
// filled, or the violations. p is its own copy: the slices it replaces are
// new ones, never the caller's changed in place.
func checkIdentityProvider(p IdentityProvider) (IdentityProvider, error) {
	var bad []FieldViolation
	add := func(field, msg string) { bad = append(bad, FieldViolation{Field: field, Message: msg}) }
	if _, err := ParseIdentityProviderID(string(p.ID), "id"); err != nil {
		add("id", `must be 1 to 64 characters of a-z, 0-9 and "-", and not "credential"`)
	}
	def, ok := presetDefaults[p.Preset]
	if !ok {
		add("preset", "must be one of oidc, google, microsoft, gitlab, github")
	}
	p.Name = strings.TrimSpace(p.Name)
	if p.Name == "" {
		p.Name = def.name
	}
	if p.Name == "" {
		p.Name = string(p.ID)
	}
	if !utf8.ValidString(p.Name) || utf8.RuneCountInString(p.Name) > MaxIdentityProviderNameLength || hasControl(p.Name) {
		add("name", "must be 1 to 128 characters")
	} else if HasBidiControl(p.Name) {
		add("name", bidiMessage)
	}
	if p.Issuer == "" {
		p.Issuer = def.issuer
	}
	switch {
	case p.Preset == PresetGitHub && p.Issuer != "":
		add("issuer", "GitHub is not an OpenID provider: leave it out")
	case ok && p.Preset.IsOIDC() && p.Issuer == "":
		add("issuer", "is required for this preset (Microsoft: https://login.microsoftonline.com/<tenant>/v2.0)")
	case p.Issuer != "":
		if msg := endpointProblem(p.Issuer); msg != "" {
			add("issuer", msg)
		}
	}
	p.ClientID = strings.TrimSpace(p.ClientID)
	if p.ClientID == "" || len(p.ClientID) > maxClientIDLength || hasControl(p.ClientID) || !utf8.ValidString(p.ClientID) {
		add("clientId", "must be 1 to 512 characters")
	}
	if len(p.SealedClientSecret) == 0 {
		add("clientSecret", "is required")
	}
	e := &p.Endpoints
	if e.Authorization == "" {
		e.Authorization = def.endpoints.Authorization
	}
	if e.Token == "" {
		e.Token = def.endpoints.Token
	}
	if e.API == "" {
		e.API = def.endpoints.API
	}
	for _, f := range []struct{ field, v string }{
		{"endpoints.authorization", e.Authorization}, {"endpoints.token", e.Token}, {"endpoints.userinfo", e.UserInfo},
		{"endpoints.jwks", e.JWKS}, {"endpoints.api", e.API},
	} {
		if f.v != "" {
			if msg := endpointProblem(f.v); msg != "" {
				add(f.field, msg)
			}
		}
	}
	if len(p.Scopes) == 0 {
		p.Scopes = slices.Clone(def.scopes)
	}
	scopes := make([]string, 0, len(p.Scopes))
	for i, s := range p.Scopes {
		s = strings.TrimSpace(s)
		if s == "" || len(s) > maxScopeLength || strings.ContainsAny(s, " \"\\") || hasControl(s) || !utf8.ValidString(s) {
			add(fmt.Sprintf("scopes[%d]", i), "must be a scope token (no spaces, quotes or backslashes)")
			continue
		}
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	if len(scopes) > MaxIdentityProviderScopes {
		add("scopes", fmt.Sprintf("must list at most %d scopes", MaxIdentityProviderScopes))
	}
	if p.Preset.IsOIDC() && ok && !slices.Contains(scopes, "openid") {
		scopes = append([]string{"openid"}, scopes...)
	}
	p.Scopes = scopes
	if p.OrganizationID == "" {
		if len(p.Domains) > 0 {
			add("domains", "only an organization's provider routes domains")
		}
		if p.RequireSSO {
			add("requireSso", "only an organization's provider can be required")
		}
		p.DefaultRole = ""
	} else {
		if p.DefaultRole == "" {
			p.DefaultRole = OrgRoleMember
		}
		if _, err := ParseOrgRoles([]string{string(p.DefaultRole)}); err != nil || p.DefaultRole == OrgRoleOwner {
			add("defaultRole", `must be "member" or "admin"`)
		}
	}
	if len(p.Domains) > MaxIdentityProviderDomains {
		add("domains", fmt.Sprintf("must list at most %d domains", MaxIdentityProviderDomains))
	}
	doms := make([]DomainID, 0, len(p.Domains))
	for _, d := range p.Domains {
		if !slices.Contains(doms, d) {
			doms = append(doms, d)
		}
	}
	p.Domains = doms
	if len(bad) > 0 {
		return IdentityProvider{}, Invalid("identity_provider.invalid", "Invalid identity provider", bad...)
	}
	return p, nil
}

// endpointProblem says what is wrong with a provider URL, or "": it must be
// absolute https (or http on a loopback host, for tests and local
// providers), at most 2048 characters, without user information or
// fragment.
func endpointProblem(s string) string {
	if len(s) > MaxIdentityProviderURLLength || !utf8.ValidString(s) || hasControl(s) {
		return "must be a URL of at most 2048 characters"
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" || strings.Contains(s, "#") {
		return "must be an absolute URL without user information or fragment"
	}
	switch u.Scheme {
	case "https":
		return ""
	case "http":
		if isLoopbackHost(u.Hostname()) {
			return ""
		}
	}
	return "must be https (http only on a loopback host)"
}

// hasControl reports whether s has a control character (NUL included).
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// LinkedAccountID identifies a LinkedAccount: the row id Better Auth's
// unlink-account and get-access-token take as accountId.
type LinkedAccountID string

// LinkedAccount ties an upstream identity, (ProviderID, Subject), to a local
// user. Its tokens are sealed together (purpose SealLinkedAccountTokens, id
// the account's id) and never listed.
type LinkedAccount struct {
	ID         LinkedAccountID
	UserID     UserID
	ProviderID IdentityProviderID
	// Subject is the provider's stable id of the person (sub, GitHub's
	// numeric id).
	Subject string
	// Email is the address the provider gave at the last sign-in.
	Email        string
	Scopes       []string
	SealedTokens []byte
	// AccessTokenExpiresAt and RefreshTokenExpiresAt are zero when unknown.
	AccessTokenExpiresAt  time.Time
	RefreshTokenExpiresAt time.Time
	CreatedAt             time.Time
	UpdatedAt             time.Time
}

// maxSubjectLength bounds a subject (OpenID Connect: at most 255 ASCII
// characters).
const maxSubjectLength = 255

// NewLinkedAccount checks a and returns it with its times set to now.
func NewLinkedAccount(a LinkedAccount, now time.Time) (LinkedAccount, error) {
	if a.ID == "" || a.UserID == "" || a.ProviderID == "" {
		return LinkedAccount{}, Invalid("linked_account.invalid", "a linked account needs an id, a user and a provider")
	}
	if err := CheckSubject(a.Subject); err != nil {
		return LinkedAccount{}, err
	}
	a.CreatedAt, a.UpdatedAt = Timestamp(now), Timestamp(now)
	a.AccessTokenExpiresAt = timestampOrZero(a.AccessTokenExpiresAt)
	a.RefreshTokenExpiresAt = timestampOrZero(a.RefreshTokenExpiresAt)
	return a, nil
}

// CheckSubject refuses an upstream subject that is empty, longer than 255
// bytes, not UTF-8, holds a control character, or is one of the strings a
// careless provider library produces for a missing value.
func CheckSubject(s string) error {
	if s == "" || len(s) > maxSubjectLength || !utf8.ValidString(s) || hasControl(s) || s == "undefined" || s == "null" {
		return ErrUpstreamUserInfo
	}
	return nil
}

// FederationState is a sign-in (or a link) in flight at an upstream
// provider. The state parameter travels to the provider and back and in a
// signed browser cookie; only its hash is stored. SealedSecrets holds the
// PKCE verifier and the nonce, sealed (purpose SealFederationState, id the
// hash in hex). It lives FederationStateTTL and is used once.
type FederationState struct {
	IDHash     []byte
	ProviderID IdentityProviderID
	// SealedSecrets is opaque to the store.
	SealedSecrets []byte
	CallbackURL   string
	ErrorURL      string
	NewUserURL    string
	// LinkUserID is set by link-social: the upstream identity joins this
	// signed-in user, whose session LinkSessionID must still be live.
	LinkUserID    UserID
	LinkSessionID SessionID
	RequestSignUp bool
	ExpiresAt     time.Time
	UsedAt        time.Time
}

// FederationStateTTL is how long a sign-in may stay at the provider (Better
// Auth: 10 minutes).
const FederationStateTTL = 10 * time.Minute

// NewFederationState checks s and returns it with its expiry normalised.
func NewFederationState(s FederationState, now time.Time) (FederationState, error) {
	if len(s.IDHash) == 0 || s.ProviderID == "" || len(s.SealedSecrets) == 0 || !s.ExpiresAt.After(now) {
		return FederationState{}, Invalid("federation.invalid_state", "a sign-in in flight needs an id, a provider, its secrets and a future expiry")
	}
	if (s.LinkUserID == "") != (s.LinkSessionID == "") {
		return FederationState{}, Invalid("federation.invalid_state", "a link names both its user and its session")
	}
	s.ExpiresAt = Timestamp(s.ExpiresAt)
	s.UsedAt = time.Time{}
	return s, nil
}

// The errors of federation. The upstream ones say which step failed and
// nothing the provider said: their causes are logged.
var (
	ErrIdentityProviderNotFound    = NotFound("identity_provider.not_found", "identity provider")
	ErrIdentityProviderExists      = NewError(KindConflict, "identity_provider.exists", "an identity provider with this id already exists")
	ErrIdentityProviderDomainTaken = NewError(KindConflict, "identity_provider.domain_taken", "the domain already routes to another identity provider")
	ErrLinkedAccountNotFound       = NotFound("linked_account.not_found", "linked account")
	ErrLinkedAccountExists         = NewError(KindConflict, "linked_account.exists", "this upstream account is already linked")
	ErrLastLinkedAccount           = NewError(KindConflict, "linked_account.last", "the user's last way to sign in cannot be unlinked")
	ErrFederationStateNotFound     = NotFound("federation.state_not_found", "sign-in state")
	ErrFederationStateExists       = NewError(KindConflict, "federation.state_exists", "a sign-in state with this id already exists")

	// ErrUpstreamDiscovery: the provider's discovery document or key set
	// could not be read, or names another issuer.
	ErrUpstreamDiscovery = NewError(KindUnavailable, "federation.discovery_failed", "the identity provider could not be reached")
	// ErrUpstreamCode: the token endpoint refused the code (or answered
	// nonsense).
	ErrUpstreamCode = NewError(KindUnauthenticated, "federation.invalid_code", "the identity provider refused the authorization code")
	// ErrUpstreamIDToken: the ID token's signature, algorithm, issuer,
	// audience, expiry or nonce is wrong.
	ErrUpstreamIDToken = NewError(KindUnauthenticated, "federation.invalid_id_token", "the identity provider's ID token is not valid")
	// ErrUpstreamUserInfo: no usable subject or profile came back.
	ErrUpstreamUserInfo = NewError(KindUnauthenticated, "federation.user_info_failed", "the identity provider gave no usable profile")
	// ErrUpstreamRefresh: the refresh grant was refused.
	ErrUpstreamRefresh = NewError(KindInvalid, "federation.refresh_failed", "the identity provider refused the refresh token")
)
