package framework

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/mfa"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// The passkey plugin's routes (@better-auth/passkey 1.7.6, design note
// better-auth-multi-factor-wire §6): the ceremonies' options and their
// verification, and the user's passkeys listed, renamed and deleted. A
// ceremony's challenge id travels in the signed better-auth-passkey cookie
// (Max-Age 300) and is used once.

// PasskeyDescriptor names a credential in a ceremony's options.
type PasskeyDescriptor struct {
	Type       string   `json:"type" example:"public-key"`
	ID         string   `json:"id" doc:"The credential id, base64url without padding."`
	Transports []string `json:"transports,omitempty" example:"[\"internal\",\"hybrid\"]"`
}

// PasskeyRegisterOptionsOutput is PublicKeyCredentialCreationOptionsJSON,
// which passkeyClient hands to navigator.credentials.create.
type PasskeyRegisterOptionsOutput struct {
	SetCookie []http.Cookie `header:"Set-Cookie" doc:"The signed better-auth-passkey cookie naming the challenge (5 minutes, used once)."`
	Body      struct {
		Challenge string `json:"challenge" doc:"32 random bytes, base64url without padding."`
		RP        struct {
			Name string `json:"name" example:"Gatehouse"`
			ID   string `json:"id" example:"example.com"`
		} `json:"rp"`
		User struct {
			ID          string `json:"id" doc:"The user handle, base64url: the user id's bytes."`
			Name        string `json:"name" example:"ada@example.com"`
			DisplayName string `json:"displayName" example:"ada@example.com"`
		} `json:"user"`
		PubKeyCredParams []struct {
			Type string `json:"type" example:"public-key"`
			Alg  int    `json:"alg" example:"-7"`
		} `json:"pubKeyCredParams"`
		Timeout                int                 `json:"timeout" example:"60000"`
		ExcludeCredentials     []PasskeyDescriptor `json:"excludeCredentials,omitempty" doc:"The user's passkeys, so an authenticator is not registered twice."`
		AuthenticatorSelection struct {
			AuthenticatorAttachment string `json:"authenticatorAttachment,omitempty" enum:"platform,cross-platform"`
			RequireResidentKey      bool   `json:"requireResidentKey" example:"true"`
			ResidentKey             string `json:"residentKey" example:"required"`
			UserVerification        string `json:"userVerification" example:"required"`
		} `json:"authenticatorSelection"`
		Attestation string   `json:"attestation,omitempty" example:"none"`
		Hints       []string `json:"hints,omitempty"`
	}
}

// PasskeyAuthenticateOptionsOutput is PublicKeyCredentialRequestOptionsJSON,
// which passkeyClient hands to navigator.credentials.get.
type PasskeyAuthenticateOptionsOutput struct {
	SetCookie []http.Cookie `header:"Set-Cookie" doc:"The signed better-auth-passkey cookie naming the challenge (5 minutes, used once)."`
	Body      struct {
		Challenge        string              `json:"challenge" doc:"32 random bytes, base64url without padding."`
		Timeout          int                 `json:"timeout" example:"60000"`
		RPID             string              `json:"rpId" example:"example.com"`
		AllowCredentials []PasskeyDescriptor `json:"allowCredentials,omitempty" doc:"When signed in with passkeys: the user's, to step the session up. Absent otherwise: any discoverable passkey signs its owner in."`
		UserVerification string              `json:"userVerification" example:"required"`
	}
}

// PasskeyRegisterOptionsInput are the registration's options.
type PasskeyRegisterOptionsInput struct {
	AuthenticatorAttachment string `query:"authenticatorAttachment" enum:"platform,cross-platform" doc:"Ask for a built-in (platform) or a roaming (cross-platform) authenticator."`
	Name                    string `query:"name" maxLength:"255" doc:"Accepted and ignored: the name is given to verify-registration."`
	Context                 string `query:"context" maxLength:"1024" doc:"Accepted and ignored."`
}

func (s *API) passkeyRegisterOptions(ctx context.Context, in *PasskeyRegisterOptionsInput) (*PasskeyRegisterOptionsOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.Passkeys.RegisterOptions(ctx, mfa.PasskeyRegisterOptions{Principal: p, Attachment: in.AuthenticatorAttachment})
	if err != nil {
		return nil, err
	}
	out := &PasskeyRegisterOptionsOutput{}
	if err := recast(res.Creation, &out.Body); err != nil {
		return nil, err
	}
	out.SetCookie = []http.Cookie{s.Cookies.PasskeyCookie(res.ChallengeID, mfa.PasskeyChallengeTTL)}
	return out, nil
}

func (s *API) passkeyAuthenticateOptions(ctx context.Context, _ *struct{}) (*PasskeyAuthenticateOptionsOutput, error) {
	p, err := s.optionalPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.Passkeys.AuthenticateOptions(ctx, p)
	if err != nil {
		return nil, err
	}
	out := &PasskeyAuthenticateOptionsOutput{}
	if err := recast(res.Request, &out.Body); err != nil {
		return nil, err
	}
	out.SetCookie = []http.Cookie{s.Cookies.PasskeyCookie(res.ChallengeID, mfa.PasskeyChallengeTTL)}
	return out, nil
}

// recast copies go-webauthn's options into the wire type, which has the
// same JSON names.
func recast(from, to any) error {
	b, err := json.Marshal(from)
	if err == nil {
		err = json.Unmarshal(b, to)
	}
	if err != nil {
		return domain.Internal("passkey: options", err)
	}
	return nil
}

// optionalPrincipal is the request's session, or nil when signed out.
func (s *API) optionalPrincipal(ctx context.Context) (*usecase.Principal, error) {
	p, err := s.Principal(ctx)
	if err == nil {
		return &p, nil
	}
	if domain.KindOf(err) == domain.KindUnauthenticated {
		return nil, nil
	}
	return nil, err
}

// PasskeyVerifyRegistrationInput is the browser's answer to a registration.
type PasskeyVerifyRegistrationInput struct {
	Body struct {
		Response      map[string]any `json:"response" doc:"The RegistrationResponseJSON of navigator.credentials.create (as @simplewebauthn/browser gives it)."`
		Name          string         `json:"name,omitempty" maxLength:"255" doc:"The passkey's name (trimmed)."`
		CreateSession bool           `json:"createSession,omitempty" doc:"Accepted and ignored: registration needs a session."`
	}
}

// PasskeyJSON is a passkey as @better-auth/passkey's table has it.
type PasskeyJSON struct {
	ID           string  `json:"id" doc:"The passkey's id: its credential id, base64url without padding."`
	Name         *string `json:"name" nullable:"true" example:"Laptop"`
	PublicKey    string  `json:"publicKey" doc:"The COSE public key, standard base64."`
	UserID       string  `json:"userId"`
	CredentialID string  `json:"credentialID" doc:"The credential id, base64url without padding."`
	Counter      uint32  `json:"counter" doc:"The authenticator's sign counter at the last use."`
	DeviceType   string  `json:"deviceType" enum:"singleDevice,multiDevice" doc:"multiDevice: the passkey can be synced (backup eligible)."`
	BackedUp     bool    `json:"backedUp" doc:"The passkey is synced (backup state)."`
	Transports   string  `json:"transports" doc:"Comma-joined transports." example:"internal,hybrid"`
	CreatedAt    string  `json:"createdAt" format:"date-time"`
	AAGUID       string  `json:"aaguid" doc:"The authenticator model, as a UUID." example:"00000000-0000-0000-0000-000000000000"`
}

func passkeyJSON(c domain.PasskeyCredential) PasskeyJSON {
	id := base64.RawURLEncoding.EncodeToString(c.ID)
	out := PasskeyJSON{ID: id, PublicKey: base64.StdEncoding.EncodeToString(c.PublicKey), UserID: string(c.UserID),
		CredentialID: id, Counter: c.SignCount, DeviceType: "singleDevice", BackedUp: c.BackedUp,
		Transports: strings.Join(c.Transports, ","), CreatedAt: edge.JSDate(c.CreatedAt), AAGUID: aaguid(c.AAGUID)}
	if c.BackupEligible {
		out.DeviceType = "multiDevice"
	}
	if c.Name != "" {
		out.Name = &c.Name
	}
	return out
}

// aaguid formats 16 bytes as a UUID (all zeros when absent).
func aaguid(b []byte) string {
	if len(b) != 16 {
		b = make([]byte, 16)
	}
	const hex = "0123456789abcdef"
	var sb strings.Builder
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			sb.WriteByte('-')
		}
		sb.WriteByte(hex[c>>4])
		sb.WriteByte(hex[c&0xf])
	}
	return sb.String()
}

// PasskeyOutput is one passkey.
type PasskeyOutput struct {
	Body PasskeyJSON
}

func (s *API) passkeyVerifyRegistration(ctx context.Context, in *PasskeyVerifyRegistrationInput) (*PasskeyOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	ri := edge.RequestInfoFrom(ctx)
	resp, err := responseBytes(in.Body.Response)
	if err != nil {
		return nil, err
	}
	c, err := s.Passkeys.VerifyRegistration(ctx, mfa.PasskeyVerifyRegistration{Principal: p, Actor: userActor(ctx, p),
		ChallengeID: s.Cookies.PasskeyChallenge(ri.Request), Response: resp, Name: in.Body.Name})
	if err != nil {
		return nil, err
	}
	return &PasskeyOutput{Body: passkeyJSON(c)}, nil
}

// responseBytes is body.response as JSON for the WebAuthn parser.
func responseBytes(r map[string]any) ([]byte, error) {
	if r == nil {
		return nil, domain.Invalid("passkey.invalid_response", "The passkey response is missing",
			domain.FieldViolation{Field: "response", Message: "is required"})
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, domain.Internal("passkey: response", err)
	}
	return b, nil
}

func userActor(ctx context.Context, p usecase.Principal) usecase.Actor {
	return usecase.UserActor(p.User.ID(), edge.RequestIDFrom(ctx), edge.RequestInfoFrom(ctx).ClientIP)
}

// PasskeyVerifyAuthenticationInput is the browser's answer to an
// authentication.
type PasskeyVerifyAuthenticationInput struct {
	Body struct {
		Response map[string]any `json:"response" doc:"The AuthenticationResponseJSON of navigator.credentials.get (as @simplewebauthn/browser gives it)."`
	}
}

// PasskeyVerifyAuthenticationOutput is the session the passkey opened (or
// the current one, stepped up) and its user.
type PasskeyVerifyAuthenticationOutput struct {
	edge.SessionHeaders
	Body struct {
		Session SessionJSON `json:"session"`
		User    UserJSON    `json:"user"`
	}
}

func (s *API) passkeyVerifyAuthentication(ctx context.Context, in *PasskeyVerifyAuthenticationInput) (*PasskeyVerifyAuthenticationOutput, error) {
	ri := edge.RequestInfoFrom(ctx)
	resp, err := responseBytes(in.Body.Response)
	if err != nil {
		return nil, err
	}
	p, err := s.optionalPrincipal(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.Passkeys.VerifyAuthentication(ctx, mfa.PasskeyVerifyAuthentication{Principal: p,
		ChallengeID: s.Cookies.PasskeyChallenge(ri.Request), Response: resp, Client: ri.Client()})
	if err != nil {
		return nil, err
	}
	out := &PasskeyVerifyAuthenticationOutput{}
	out.Body.Session, out.Body.User = sessionJSON(res.Session), userJSON(res.User)
	if res.NewSession {
		out.SignIn(s.Cookies, res.Token, res.Session)
	}
	// The challenge cookie stays, as Better Auth leaves it: its challenge
	// is used, and the next options call replaces it.
	return out, nil
}

// PasskeyListOutput is the user's passkeys, newest first.
type PasskeyListOutput struct {
	Body []PasskeyJSON
}

func (s *API) passkeyList(ctx context.Context, _ *struct{}) (*PasskeyListOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	list, err := s.Passkeys.List(ctx, p)
	if err != nil {
		return nil, err
	}
	out := &PasskeyListOutput{Body: make([]PasskeyJSON, len(list))}
	for i, c := range list {
		out.Body[i] = passkeyJSON(c)
	}
	return out, nil
}

// PasskeyIDInput names one of the user's passkeys.
type PasskeyIDInput struct {
	Body struct {
		ID string `json:"id" minLength:"1" maxLength:"1400" doc:"The passkey's id (its credential id, base64url)."`
	}
}

// PasskeyUpdateInput renames one of the user's passkeys.
type PasskeyUpdateInput struct {
	Body struct {
		ID   string `json:"id" minLength:"1" maxLength:"1400" doc:"The passkey's id (its credential id, base64url)."`
		Name string `json:"name" minLength:"1" maxLength:"255" doc:"The new name (trimmed)."`
	}
}

// PasskeyUpdateOutput is the renamed passkey.
type PasskeyUpdateOutput struct {
	Body struct {
		Passkey PasskeyJSON `json:"passkey"`
	}
}

// passkeyID decodes body.id; an id that is not base64url names no passkey.
func passkeyID(id string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(id, "="))
	if err != nil || len(b) == 0 {
		return nil, domain.Invalid("passkey.invalid_id", "The passkey id is not base64url",
			domain.FieldViolation{Field: "id", Message: "must be a credential id in base64url"})
	}
	return b, nil
}

func (s *API) passkeyUpdate(ctx context.Context, in *PasskeyUpdateInput) (*PasskeyUpdateOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	id, err := passkeyID(in.Body.ID)
	if err != nil {
		return nil, err
	}
	c, err := s.Passkeys.Rename(ctx, mfa.PasskeyChange{Principal: p, Actor: userActor(ctx, p), ID: id, Name: in.Body.Name})
	if err != nil {
		return nil, err
	}
	out := &PasskeyUpdateOutput{}
	out.Body.Passkey = passkeyJSON(c)
	return out, nil
}

func (s *API) passkeyDelete(ctx context.Context, in *PasskeyIDInput) (*edge.StatusOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	id, err := passkeyID(in.Body.ID)
	if err != nil {
		return nil, err
	}
	if err := s.Passkeys.Delete(ctx, mfa.PasskeyChange{Principal: p, Actor: userActor(ctx, p), ID: id}); err != nil {
		return nil, err
	}
	return edge.StatusOK(), nil
}

// AddPasskeyRoutes registers the passkey plugin's routes in the framework
// and auth contracts. The ceremonies take the credentials rate rule; the
// cookie-bearing POSTs get the origin check.
func (s *API) AddPasskeyRoutes() {
	type op = huma.Operation
	const tag = "Passkeys"
	base := func(method string, o op) op {
		o.Path = edge.FrameworkBase + "/passkey" + o.Path
		o.Method = method
		o.Tags = []string{tag}
		o.Errors = append(o.Errors, http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests)
		return o
	}
	signedIn := func(method string, o op) op {
		o.Security = edge.SessionSecurity
		return base(method, o)
	}
	ceremony := func(o op) op { return edge.WithRate(o, edge.RateCredentials) }
	fw, get, post := edge.ContractFramework, http.MethodGet, http.MethodPost

	// Adding a factor starts here, with a GET: an impersonation may not
	// (edge.Impersonation), as it may not finish one.
	edge.Add(s.routes, fw, edge.WithPolicy(ceremony(signedIn(get, op{OperationID: "passkeyGenerateRegisterOptions", Path: "/generate-register-options",
		Summary: "Start registering a passkey",
		Description: "Returns PublicKeyCredentialCreationOptionsJSON for the signed-in user (their passkeys excluded; a discoverable credential " +
			"and user verification required) and sets the better-auth-passkey cookie naming the challenge: 5 minutes, used once. " +
			"The session must be fresh (403 SESSION_NOT_FRESH), as for verify-registration."})), edge.RefusedWhileImpersonating),
		s.passkeyRegisterOptions, edge.ContractAuth)
	edge.Add(s.routes, fw, ceremony(signedIn(post, op{OperationID: "passkeyVerifyRegistration", Path: "/verify-registration",
		Summary: "Finish registering a passkey",
		Description: "Checks the browser's answer to the challenge of the better-auth-passkey cookie (origin, RP ID, user verification) and stores " +
			"the passkey. 400 CHALLENGE_NOT_FOUND when the challenge is missing, used or expired; 401 YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY " +
			"when it was issued to another user; 400 FAILED_TO_VERIFY_REGISTRATION when the answer does not verify."})),
		s.passkeyVerifyRegistration, edge.ContractAuth)
	edge.Add(s.routes, fw, ceremony(base(get, op{OperationID: "passkeyGenerateAuthenticateOptions", Path: "/generate-authenticate-options",
		Summary: "Start signing in with a passkey",
		Description: "Returns PublicKeyCredentialRequestOptionsJSON and sets the better-auth-passkey cookie (5 minutes, used once). Signed out, or " +
			"signed in without passkeys: a discoverable ceremony (no allowCredentials). Signed in with passkeys: allowCredentials lists them, " +
			"and verify-authentication steps the current session up."})),
		s.passkeyAuthenticateOptions, edge.ContractAuth)
	edge.Add(s.routes, fw, ceremony(base(post, op{OperationID: "passkeyVerifyAuthentication", Path: "/verify-authentication",
		Summary: "Sign in with a passkey",
		Description: "Checks the browser's answer to the challenge of the better-auth-passkey cookie. A discoverable ceremony starts a session " +
			"(a complete sign-in: no two-factor challenge) and sets the session cookie; a signed-in ceremony records the passkey in the current " +
			"session (step-up). 400 CHALLENGE_NOT_FOUND (missing, used or expired); 401 PASSKEY_NOT_FOUND (unknown credential); " +
			"401 AUTHENTICATION_FAILED (wrong origin, RP ID, signature, no user verification, or another user's credential); " +
			"401 PASSKEY_COUNTER_REGRESSED (the counter of a device-bound passkey did not advance); 403 BANNED_USER."})),
		s.passkeyVerifyAuthentication, edge.ContractAuth)
	edge.Add(s.routes, fw, signedIn(get, op{OperationID: "passkeyListUserPasskeys", Path: "/list-user-passkeys", Summary: "The user's passkeys",
		Description: "The signed-in user's passkeys, newest first, as @better-auth/passkey's table has them."}),
		s.passkeyList, edge.ContractAuth)
	edge.Add(s.routes, fw, signedIn(post, op{OperationID: "passkeyUpdatePasskey", Path: "/update-passkey", Summary: "Rename a passkey",
		Description: "Renames one of the user's passkeys (404 PASSKEY_NOT_FOUND for an unknown one or another user's)."}),
		s.passkeyUpdate, edge.ContractAuth)
	edge.Add(s.routes, fw, signedIn(post, op{OperationID: "passkeyDeletePasskey", Path: "/delete-passkey", Summary: "Delete a passkey",
		Description: "Deletes one of the user's passkeys (404 PASSKEY_NOT_FOUND for an unknown one or another user's). Deleting the last one " +
			"is a sensitive action: with a second factor, one must have been proven in the session recently (403 SECOND_FACTOR_REQUIRED)."}),
		s.passkeyDelete, edge.ContractAuth)
}
