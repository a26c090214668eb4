package framework_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/adapters/httpapi/framework"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge/edgetest"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// newFramework serves the framework's session routes on memory stores,
// with only the use cases they call: the world's authentication for the
// edge, and list-sessions.
func newFramework(t *testing.T) (*edgetest.Server, *usecasetest.World) {
	t.Helper()
	w := usecasetest.NewWorld(t, false)
	srv := edgetest.New(edge.Deps{Sessions: w.Sessions})
	fw := framework.New(srv.Kit, framework.Deps{Sessions: w.Sessions})
	fw.AddFrameworkRoutes()
	return srv, w
}

func TestListSessions(t *testing.T) {
	srv, w := newFramework(t)
	ada := w.MustSignUp(t, "ada@example.com")

	t.Run("signed_in", func(t *testing.T) {
		res := srv.Do(http.MethodGet, "/api/auth/list-sessions", "", "Authorization", "Bearer "+ada.Token)
		if res.Code != http.StatusOK {
			t.Fatalf("status %d, want 200: %s", res.Code, res.Body)
		}
		var list []struct {
			ID     string `json:"id"`
			UserID string `json:"userId"`
		}
		if err := json.Unmarshal(res.Body.Bytes(), &list); err != nil {
			t.Fatalf("body %s: %v", res.Body, err)
		}
		if len(list) != 1 || list[0].ID != string(ada.Session.ID()) || list[0].UserID != string(ada.User.ID()) {
			t.Fatalf("sessions %+v, want Ada's one session %s", list, ada.Session.ID())
		}
	})
	t.Run("signed_out", func(t *testing.T) {
		res := srv.Do(http.MethodGet, "/api/auth/list-sessions", "")
		if res.Code != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401: %s", res.Code, res.Body)
		}
		if got, want := strings.TrimSpace(res.Body.String()), `{"message":"Unauthorized","code":"UNAUTHORIZED"}`; got != want {
			t.Fatalf("body %s, want %s", got, want)
		}
	})
	t.Run("unknown_token", func(t *testing.T) {
		unknown := "A" + ada.Token[1:]
		if ada.Token[0] == 'A' { // the token is random: change its first character whatever it is
			unknown = "B" + ada.Token[1:]
		}
		res := srv.Do(http.MethodGet, "/api/auth/list-sessions", "", "Authorization", "Bearer "+unknown)
		if res.Code != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401: %s", res.Code, res.Body)
		}
	})
}

// get-session answers null without a live session, and clears a session
// cookie that does not resolve.
func TestGetSession_signed_out(t *testing.T) {
	srv, _ := newFramework(t)

	t.Run("no_session", func(t *testing.T) {
		res := srv.Do(http.MethodGet, "/api/auth/get-session", "")
		if res.Code != http.StatusOK || strings.TrimSpace(res.Body.String()) != "null" || res.Header().Get("Set-Cookie") != "" {
			t.Fatalf("status %d body %q cookies %q, want 200 null and no cookie", res.Code, res.Body, res.Header().Values("Set-Cookie"))
		}
	})
	t.Run("forged_cookie_is_cleared", func(t *testing.T) {
		res := srv.Do(http.MethodGet, "/api/auth/get-session", "", "Cookie", "__Secure-gatehouse.session_token=forged.value")
		if res.Code != http.StatusOK || strings.TrimSpace(res.Body.String()) != "null" {
			t.Fatalf("status %d body %q, want 200 null", res.Code, res.Body)
		}
		cleared := false
		for _, c := range res.Result().Cookies() {
			if c.Name == "__Secure-gatehouse.session_token" && c.MaxAge < 0 {
				cleared = true
			}
		}
		if !cleared {
			t.Fatalf("cookies %q, want the session cookie expired", res.Header().Values("Set-Cookie"))
		}
	})
}
