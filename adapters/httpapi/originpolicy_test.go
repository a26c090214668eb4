package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
)

// Every cookie route served today sits under /api/auth or /api/admin; these
// routes prove the origin check follows the declared session security, not
// the path.
func TestOriginCheck_follows_declared_session_security_outside_the_framework_paths(t *testing.T) {
	s, _ := newTestServer(t)
	done := func(c *gin.Context) { c.Status(http.StatusNoContent) }
	s.Handle(http.MethodPost, "/elsewhere/session", edge.Policy{Rate: edge.RateGeneral, Security: edge.SecuritySession}, done)
	s.Handle(http.MethodPost, "/elsewhere/open", edge.Policy{Rate: edge.RateGeneral}, done)
	register(s, edge.ContractAuth, huma.Operation{OperationID: "sessionElsewhere", Method: http.MethodPost, Path: "/api/elsewhere/{id}", Security: edge.SessionSecurity},
		func(context.Context, *struct {
			ID string `path:"id"`
		}) (*struct{}, error) {
			return nil, nil
		})

	post := func(path, origin string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, path, nil)
		req.Header.Set("Cookie", "gatehouse.session_token=x")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		return w
	}
	for _, path := range []string{"/elsewhere/session", "/api/elsewhere/42"} {
		if w := post(path, "https://evil.example"); w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "Invalid origin") {
			t.Fatalf("%s from an untrusted origin: %d %s", path, w.Code, w.Body)
		}
		if w := post(path, ""); w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "Missing or null Origin") {
			t.Fatalf("%s without an origin: %d %s", path, w.Code, w.Body)
		}
		if w := post(path, "http://localhost:8080"); w.Code >= 400 {
			t.Fatalf("%s from the base URL: %d %s", path, w.Code, w.Body)
		}
	}
	// The same request to a route that reads no cookie passes.
	if w := post("/elsewhere/open", "https://evil.example"); w.Code != http.StatusNoContent {
		t.Fatalf("a route without session security was origin-checked: %d %s", w.Code, w.Body)
	}
}
