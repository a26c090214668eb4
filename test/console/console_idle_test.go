package console

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// mustConsoleSeen returns a console_seen cookie, as the console signs it
// (docs/console.md: the last console visit, bound to the session), saying
// the session's last console visit was at. The test writes it instead of
// waiting out a real idle timeout: the harness has no clock to move, and
// the shortest timeout is a second.
func mustConsoleSeen(t testing.TB, c *harness.Client, at time.Time) (name, value string) {
	t.Helper()
	for n := range c.Cookies {
		if strings.HasSuffix(n, ".console_seen") {
			name = n
		}
	}
	if name == "" {
		t.Fatalf("no console_seen cookie among %v", c.Cookies)
	}
	sess, _ := harness.MustSession(t, c)["session"].(map[string]any)
	id, _ := sess["id"].(string)
	sum := sha256.Sum256([]byte("gatehouse-console:" + id))
	_, value = harness.SignCookie(hex.EncodeToString(sum[:16])+"|"+strconv.FormatInt(at.UnixMilli(), 10), harness.TestSecret)
	return name, value
}

// Ensure the console's idle timer counts console visits only: a session
// kept busy on the JSON routes (get-session, list-sessions, update-user, as
// a script or a single-page app would) does not keep the console open,
// and stays signed in itself once the console asks to sign in again.
func TestConsole_idle_timeout_ignores_json_activity(t *testing.T) {
	t.Parallel()
	// A fresh application: a setting of its own.
	app := harness.MustStart(t, harness.StoreSQLite, harness.Env(harness.AdminEnv, map[string]string{"GATEHOUSE_CONSOLE_IDLE_TIMEOUT": "10m"}))
	admin, _ := harness.MustAdmin(t, app)
	harness.MustConsolePage(t, admin.Get("/console/users"), http.StatusOK)

	// Control: a last visit 9 minutes ago, as written here, lets the
	// console in, so the cookie below is the console's own.
	recent := admin.Clone()
	name, value := mustConsoleSeen(t, recent, time.Now().Add(-9*time.Minute))
	recent.Cookies[name] = value
	harness.MustConsolePage(t, recent.Get("/console/users"), http.StatusOK)

	// The last console visit 11 minutes ago, then a busy session.
	busy := admin.Clone()
	name, value = mustConsoleSeen(t, busy, time.Now().Add(-11*time.Minute))
	busy.Cookies[name] = value
	for range 3 {
		harness.MustSession(t, busy)
		harness.MustStatus(t, busy.Get("/api/auth/list-sessions"), http.StatusOK)
	}
	harness.MustStatusTrue(t, busy.Post("/api/auth/update-user", `{"name":"Root Admin"}`))
	harness.MustStatus(t, busy.Get("/api/auth/admin/list-users"), http.StatusOK)
	if busy.Cookies[name] != value {
		t.Fatalf("a JSON route moved the console's last visit: %s", busy.Cookies[name])
	}
	harness.MustSignInRedirect(t, busy.Get("/console/users"), "/console/users")
	harness.MustSession(t, busy) // the session itself lives on
}
