package framework

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
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

func (s *API) jwks(ctx context.Context, _ *struct{}) (*JWKSOutput, error) {
	doc, err := s.SigningKeys.JWKS(ctx)
	if err != nil {
		return nil, err
	}
	out := &JWKSOutput{AllowOrigin: "*",
		CacheControl: "public, max-age=" + strconv.Itoa(int(s.SigningKeys.JWKSMaxAge()/time.Second))}
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

func (s *API) frameworkToken(ctx context.Context, _ *struct{}) (*FrameworkTokenOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	token, err := s.SigningKeys.FrameworkToken(ctx, &p, userJSON(p.User))
	if err != nil {
		return nil, err
	}
	out := &FrameworkTokenOutput{CacheControl: "no-store"}
	out.Body.Token = token
	return out, nil
}

// AddTokenRoutes registers the key set and the JWT plugin's token route.
func (s *API) AddTokenRoutes() {
	type op = huma.Operation
	const tagTokens = "Tokens"
	edge.Add(s.routes, edge.ContractFramework, edge.WithPolicy(op{OperationID: "getJwks", Method: http.MethodGet, Path: edge.FrameworkBase + "/jwks", Tags: []string{tagTokens},
		Summary: "Key set (JWKS)",
		Description: "The public keys tokens are verified with (RFC 7517): an Ed25519 key (alg EdDSA) for the framework's tokens and an RSA key (alg RS256) " +
			"for OpenID Connect, each with kid, alg and use sig; after a rotation the retired key stays until every token it signed has expired. " +
			"Public members only. Cacheable (Cache-Control max-age), readable from any origin.",
		Errors: []int{http.StatusTooManyRequests}}, edge.PublicDocument), s.jwks, edge.ContractAuth)
	edge.Add(s.routes, edge.ContractFramework, op{OperationID: "getToken", Method: http.MethodGet, Path: edge.FrameworkBase + "/token", Tags: []string{tagTokens},
		Summary: "Token for the current user", Security: edge.SessionSecurity,
		Description: "A short-lived JWT (default 15 minutes) of the signed-in user, as Better Auth's JWT plugin signs it, for APIs that verify users " +
			"offline with the key set. get-session also sends one in its set-auth-jwt header. 401 UNAUTHORIZED without a session.",
		Errors: []int{http.StatusUnauthorized, http.StatusTooManyRequests}}, s.frameworkToken, edge.ContractAuth)
}
