package oidc_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge/edgetest"
	"github.com/gatehouse/gatehouse/adapters/httpapi/oidc"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// words keeps every condition as the inner layers spell it: the 401 below
// is UNAUTHORIZED in the framework's vocabulary already.
var words = edge.WordsFunc(func(c edge.Condition) edge.Condition { return c })

// The provider's discovery and consent routes, built without the
// application: discovery names the issuer from the edge's settings; the
// consents refuse a caller without a session before any use case runs.
func TestDiscoveryAndConsents(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	srv := edgetest.New(edge.Deps{Sessions: w.Sessions})
	provider := oidc.New(srv.Kit, nil, words)
	provider.AddDiscoveryRoutes()
	provider.AddOAuthConsentRoutes()

	t.Run("discovery", func(t *testing.T) {
		res := srv.Do(http.MethodGet, "/.well-known/openid-configuration", "")
		if res.Code != http.StatusOK {
			t.Fatalf("status %d, want 200: %s", res.Code, res.Body)
		}
		var doc oidc.ProviderMetadata
		if err := json.Unmarshal(res.Body.Bytes(), &doc); err != nil {
			t.Fatalf("body %s: %v", res.Body, err)
		}
		issuer := edgetest.BaseURL + "/api/auth"
		if doc.Issuer != issuer || doc.TokenEndpoint != issuer+"/oauth2/token" {
			t.Fatalf("metadata issuer %q token %q, want %q", doc.Issuer, doc.TokenEndpoint, issuer)
		}
	})
	t.Run("consents_signed_out", func(t *testing.T) {
		res := srv.Do(http.MethodGet, "/api/auth/oauth2/get-consents", "")
		if res.Code != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401: %s", res.Code, res.Body)
		}
		if got, want := strings.TrimSpace(res.Body.String()), `{"message":"Unauthorized","code":"UNAUTHORIZED"}`; got != want {
			t.Fatalf("body %s, want %s", got, want)
		}
	})
}
