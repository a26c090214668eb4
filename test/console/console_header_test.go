package console

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure the header moves between the console and the account pages and
// signs out: the console links to the account, the account links to the
// console for an administrator only, every signed-in page links to the
// sign-out page, and the refusal a non-administrator gets shows none of the
// console's sections.
func TestShell_header_links_console_account_and_sign_out(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newConsoleWorld(t, app)
		const (
			toAccount = `<a href="/account">Your account</a>`
			toConsole = `<a href="/console">Console</a>`
			signOut   = `<a href="/sign-out">Sign out</a>`
			sections  = `aria-label="Sections"`
		)
		for _, tt := range []struct {
			name      string
			client    *harness.Client
			path      string
			status    int
			has, lack []string
		}{
			{"console_as_administrator", w.admin, "/console/users", http.StatusOK, []string{toAccount, signOut, sections}, []string{toConsole}},
			{"account_as_administrator", w.admin, "/account", http.StatusOK, []string{toConsole, signOut}, []string{toAccount, sections}},
			{"account_as_user", w.plain, "/account", http.StatusOK, []string{signOut}, []string{toConsole, sections}},
			{"console_refused_to_user", w.plain, "/console/users", http.StatusForbidden, []string{"Not an administrator"},
				[]string{sections, `href="/console/users"`, toConsole}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				body := harness.MustConsolePage(t, tt.client.Get(tt.path), tt.status)
				for _, s := range tt.has {
					if !strings.Contains(body, s) {
						t.Errorf("GET %s lacks %s", tt.path, s)
					}
				}
				for _, s := range tt.lack {
					if strings.Contains(body, s) {
						t.Errorf("GET %s shows %s", tt.path, s)
					}
				}
			})
		}
	})
}
