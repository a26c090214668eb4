package harness

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// MustCreateOrg creates an organization as the session cookie's user and
// returns its id.
func (a *BenchApp) MustCreateOrg(b *testing.B, cookie string) string {
	b.Helper()
	r := httptest.NewRequest(http.MethodPost, OrgPath("create"), strings.NewReader(`{"name":"Bench","slug":"bench"}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Origin", "http://localhost:8080") // mustConfig's base URL
	r.Header.Set("Cookie", a.Cookie+"="+cookie)
	w := a.Serve(r)
	if w.Code != http.StatusOK {
		b.Fatalf("create organization: status %d: %s", w.Code, w.Body)
	}
	var org struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &org); err != nil || org.ID == "" {
		b.Fatalf("create organization: %s", w.Body)
	}
	return org.ID
}
