package harness

import (
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

const (
	JWKSPath        = "/api/auth/jwks"
	SigningKeysPath = "/api/admin/signing-keys"
)

// MustVerifyJWT verifies token against the key set with go-jose, as a
// consumer API would, and returns its header and claims.
func MustVerifyJWT(t testing.TB, c *Client, token string) (jose.Header, map[string]any) {
	t.Helper()
	var set jose.JSONWebKeySet
	MustUnmarshal(t, c.Get(JWKSPath).Body, &set)
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		t.Fatalf("parse %q: %v", token, err)
	}
	h := tok.Headers[0]
	keys := set.Key(h.KeyID)
	if len(keys) != 1 {
		t.Fatalf("kid %q names %d keys of the key set", h.KeyID, len(keys))
	}
	var claims map[string]any
	if err := tok.Claims(keys[0].Key, &claims); err != nil {
		t.Fatalf("verify: %v", err)
	}
	return h, claims
}
