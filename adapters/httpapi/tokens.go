package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/command"
	"github.com/gatehouse/gatehouse/domain"
)

// Framework tokens (Better Auth's JWT plugin: /api/auth/jwks and
// /api/auth/token) and the administration of signing keys.

// JWKJSON is one public key of the key set. Only the public members listed
// here are ever sent, whatever the stored JWK holds.
type JWKJSON struct {
	Kty string `json:"kty" enum:"OKP,RSA" doc:"OKP for Ed25519 keys, RSA for RSA keys."`
	Kid string `json:"kid" doc:"The key's id, unique and never reused; a token's header names it."`
	Alg string `json:"alg" enum:"EdDSA,RS256" doc:"EdDSA keys sign the framework's tokens; RS256 keys OpenID Connect ID and access tokens."`
	Use string `json:"use" enum:"sig"`
	Crv string `json:"crv,omitempty" doc:"OKP keys: the curve, Ed25519."`
	X   string `json:"x,omitempty" doc:"OKP keys: the public key (base64url)."`
	N   string `json:"n,omitempty" doc:"RSA keys: the modulus (base64url)."`
	E   string `json:"e,omitempty" doc:"RSA keys: the public exponent (base64url)."`
}

// JWKSOutput is the key set.
type JWKSOutput struct {
	CacheControl string `header:"Cache-Control"`
	AllowOrigin  string `header:"Access-Control-Allow-Origin"`
	Body         struct {
		Keys []JWKJSON `json:"keys"`
	}
}

func (s *Server) jwks(ctx context.Context, _ *struct{}) (*JWKSOutput, error) {
	doc, err := s.App.Commands.SigningKeys.JWKS(ctx)
	if err != nil {
		return nil, err
	}
	out := &JWKSOutput{AllowOrigin: "*",
		CacheControl: "public, max-age=" + strconv.Itoa(int(s.App.Commands.SigningKeys.JWKSMaxAge()/time.Second))}
	if err := json.Unmarshal(doc, &out.Body); err != nil {
		return nil, domain.Internal("jwks", err)
	}
	return out, nil
}

// FrameworkTokenOutput is a signed token for the current user.
type FrameworkTokenOutput struct {
	CacheControl string `header:"Cache-Control"`
	Body         struct {
		Token string `json:"token" doc:"A JWT (EdDSA) carrying the user object with iat, sub, exp, iss and aud. Verify it with the key set at /api/auth/jwks." example:"eyJhbGciOiJFZERTQSIsImtpZCI6IjAxOTIuLi4iLCJ0eXAiOiJKV1QifQ.eyJzdWIiOiIwMTkyLi4uIn0.c2ln"`
	}
}

func (s *Server) frameworkToken(ctx context.Context, _ *struct{}) (*FrameworkTokenOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	token, err := s.App.Commands.SigningKeys.FrameworkToken(ctx, &p, userJSON(p.User))
	if err != nil {
		return nil, err
	}
	out := &FrameworkTokenOutput{CacheControl: "no-store"}
	out.Body.Token = token
	return out, nil
}

// SigningKeyJSON is a signing key as administrators see it: never its
// private half.
type SigningKeyJSON struct {
	ID             string     `json:"id" doc:"The key's kid."`
	Alg            string     `json:"alg" enum:"EdDSA,RS256"`
	Status         string     `json:"status" enum:"pending,active,retired" doc:"pending keys are published and sign from activatesAt; active keys sign (the latest activated of each algorithm); retired ones only verify."`
	CreatedAt      time.Time  `json:"createdAt"`
	ActivatesAt    time.Time  `json:"activatesAt" doc:"When the key starts (or started) signing: after a rotation, once every instance publishes it."`
	RetiredAt      *time.Time `json:"retiredAt" nullable:"true" doc:"When a newer key replaces (or replaced) it, possibly ahead, or null."`
	PublishedUntil *time.Time `json:"publishedUntil" nullable:"true" doc:"When a retired key leaves the key set (its tokens have all expired by then), or null."`
}

func signingKeyJSON(v command.SigningKeyView) SigningKeyJSON {
	return SigningKeyJSON{ID: string(v.ID), Alg: string(v.Alg), Status: v.Status, CreatedAt: v.CreatedAt, ActivatesAt: v.ActivatesAt,
		RetiredAt: edge.OptionalTime(v.RetiredAt), PublishedUntil: edge.OptionalTime(v.PublishedUntil)}
}

// SigningKeyListOutput lists signing keys.
type SigningKeyListOutput struct {
	Body struct {
		Data []SigningKeyJSON `json:"data"`
	}
}

func signingKeyList(views []command.SigningKeyView) *SigningKeyListOutput {
	out := &SigningKeyListOutput{}
	out.Body.Data = make([]SigningKeyJSON, len(views))
	for i, v := range views {
		out.Body.Data[i] = signingKeyJSON(v)
	}
	return out
}

func (s *Server) listSigningKeys(ctx context.Context, _ *struct{}) (*SigningKeyListOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	views, err := s.App.Commands.SigningKeys.List(ctx, req)
	if err != nil {
		return nil, err
	}
	return signingKeyList(views), nil
}

// RotateSigningKeysInput names the algorithm to rotate, or none for both.
type RotateSigningKeysInput struct {
	Body *struct {
		Alg       string `json:"alg,omitempty" enum:"EdDSA,RS256" doc:"The algorithm whose key to replace; absent: both."`
		Immediate bool   `json:"immediate,omitempty" doc:"For a compromised key: the new key signs at once and the old one is retired now. Other instances publish the new key only at their next reload (up to one reload interval), and until then their key sets cannot verify its tokens."`
	}
}

func (s *Server) rotateSigningKeys(ctx context.Context, in *RotateSigningKeysInput) (*SigningKeyListOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	var cmd command.RotateSigningKeys
	if in.Body != nil {
		if in.Body.Alg != "" {
			cmd.Algs = []domain.SigningAlgorithm{domain.SigningAlgorithm(in.Body.Alg)}
		}
		cmd.Immediate = in.Body.Immediate
	}
	views, err := s.App.Commands.SigningKeys.Rotate(ctx, req, cmd)
	if err != nil {
		return nil, err
	}
	return signingKeyList(views), nil
}

// addTokenRoutes registers the key set and token routes (framework
// contract) and the administration of signing keys (auth contract).
func (s *Server) addTokenRoutes() {
	type op = huma.Operation
	const (
		tagTokens = "Tokens"
		tagKeys   = "Signing keys"
	)
	register(s, edge.ContractFramework, edge.WithPolicy(op{OperationID: "getJwks", Method: http.MethodGet, Path: edge.FrameworkBase + "/jwks", Tags: []string{tagTokens},
		Summary: "Key set (JWKS)",
		Description: "The public keys tokens are verified with (RFC 7517): an Ed25519 key (alg EdDSA) for the framework's tokens and an RSA key (alg RS256) " +
			"for OpenID Connect, each with kid, alg and use sig; after a rotation the retired key stays until every token it signed has expired. " +
			"Public members only. Cacheable (Cache-Control max-age), readable from any origin.",
		Errors: []int{http.StatusTooManyRequests}}, edge.PublicDocument), s.jwks, edge.ContractAuth)
	register(s, edge.ContractFramework, op{OperationID: "getToken", Method: http.MethodGet, Path: edge.FrameworkBase + "/token", Tags: []string{tagTokens},
		Summary: "Token for the current user", Security: edge.SessionSecurity,
		Description: "A short-lived JWT (default 15 minutes) of the signed-in user, as Better Auth's JWT plugin signs it, for APIs that verify users " +
			"offline with the key set. get-session also sends one in its set-auth-jwt header. 401 UNAUTHORIZED without a session.",
		Errors: []int{http.StatusUnauthorized, http.StatusTooManyRequests}}, s.frameworkToken, edge.ContractAuth)

	adminOp := func(o op) op {
		o.Path = edge.AdminBase + o.Path
		o.Security = edge.SessionSecurity
		o.Description += " Needs a platform administrator's session: 401 without a session, 403 for anyone else."
		o.Errors = append(o.Errors, http.StatusUnauthorized, http.StatusForbidden)
		return o
	}
	register(s, edge.ContractAuth, adminOp(op{OperationID: "listSigningKeys", Method: http.MethodGet, Path: "/signing-keys", Tags: []string{tagKeys},
		Summary: "List signing keys", Description: "The published signing keys, newest first: the active key of each algorithm, any pending one, and the retired ones still in the key set."}),
		s.listSigningKeys)
	register(s, edge.ContractAuth, adminOp(op{OperationID: "rotateSigningKeys", Method: http.MethodPost, Path: "/signing-keys/rotate", Tags: []string{tagKeys},
		Summary: "Rotate signing keys",
		Description: "Makes a new key for alg (both algorithms when absent). It is published at once (pending) and signs from its activatesAt, two key " +
			"reload intervals later (2 minutes by default), when every instance publishes it; the key it replaces signs until then, then is retired " +
			"but stays in the key set until every token it signed has expired. With immediate (a compromised key) the new key signs at once and the " +
			"old one is retired now: other instances' key sets lack the new key for up to one reload interval. Audited."}),
		s.rotateSigningKeys)
}
