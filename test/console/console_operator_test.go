package console

import (
	"html"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// consoleLinkedAccount matches the unlink form's account id on a user page.
var consoleLinkedAccount = regexp.MustCompile(`name="account" value="([^"]+)"`)

// Ensure the console's operator actions on a user's sign-in go through the
// admin API's use cases and their audit entries: sending a password reset
// (admin.send-password-reset), unlinking a linked account
// (admin.unlink-account; the user's last way to sign in is refused with
// 409, and stays), and resetting their second factors
// (admin.reset-user-factors: their sessions end).
func TestConsole_operator_actions_on_sign_in(t *testing.T) {
	t.Parallel()
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			// A world of its own: two applications, one the other's provider.
			fw := harness.MustFedWorld(t, s, nil)
			const email = "uma@upstream.example"
			harness.MustVerifiedUser(t, fw.B, "Uma Upstream", email, harness.FedPassword)
			fw.SignInThroughB(t, harness.NewStrictBrowser(t, fw.A), email, map[string]any{"callbackURL": "/account"})
			admin := fw.AdminA
			adminID := harness.MustOK(t, admin.Get("/api/auth/get-session"))["user"].(map[string]any)["id"].(string)

			list := harness.MustConsolePage(t, admin.Get("/console/users?q="+url.QueryEscape(email)), http.StatusOK)
			m := regexp.MustCompile(`href="/console/users/([^"]+)"`).FindStringSubmatch(consoleRows(list))
			if m == nil {
				t.Fatalf("the search does not find %s: %s", email, list)
			}
			userPath := "/console/users/" + m[1]
			page := harness.MustConsolePage(t, admin.Get(userPath), http.StatusOK)
			acct := consoleLinkedAccount.FindStringSubmatch(page)
			if acct == nil || !strings.Contains(page, fw.Provider) {
				t.Fatalf("the user page shows no linked account to unlink: %s", page)
			}
			accountID := html.UnescapeString(acct[1])
			post := func(action string, fields url.Values) *harness.Response {
				t.Helper()
				if fields == nil {
					fields = url.Values{}
				}
				fields.Set("_token", mustConsoleTokens(t, admin, userPath)[userPath+action])
				return consolePost(admin, userPath+action, fields)
			}

			// Her only way to sign in: refused, and kept.
			if body := harness.MustConsolePage(t, post("/linked/unlink", url.Values{"account": {accountID}}), http.StatusConflict); !strings.Contains(body, "Conflict") {
				t.Fatalf("unlinking the last way to sign in: %s", body)
			}
			if page := harness.MustConsolePage(t, admin.Get(userPath), http.StatusOK); !strings.Contains(page, accountID) {
				t.Fatal("a refused unlink removed the account")
			}
			// A missing or unknown account id: refused, naming the field.
			if body := harness.MustConsolePage(t, post("/linked/unlink", nil), http.StatusBadRequest); !strings.Contains(body, "body.account") {
				t.Fatalf("unlink without an account: %s", body)
			}
			harness.MustConsolePage(t, post("/linked/unlink", url.Values{"account": {"no-such-account"}}), http.StatusNotFound)

			// A password reset gives her a password; then the link can go.
			r := post("/password-reset", nil)
			harness.MustStatus(t, r, http.StatusSeeOther)
			mustAuditEntry(t, admin, r, adminID, "admin.send-password-reset", "user", m[1])
			link, err := url.Parse(harness.MustLink(t, fw.A, email, "Reset your"))
			if err != nil {
				t.Fatal(err)
			}
			harness.MustStatusTrue(t, fw.A.NewClient(t).Post("/api/auth/reset-password", harness.MustJSON(t, map[string]string{"token": path.Base(link.Path), "newPassword": harness.FedPassword})))
			r = post("/linked/unlink", url.Values{"account": {accountID}})
			harness.MustStatus(t, r, http.StatusSeeOther)
			if got := r.Header.Get("Location"); got != userPath+"?done=unlinked" {
				t.Fatalf("unlink Location = %q", got)
			}
			mustAuditEntry(t, admin, r, adminID, "admin.unlink-account", "linked_account", accountID)
			if page := harness.MustConsolePage(t, admin.Get(userPath+"?done=unlinked"), http.StatusOK); strings.Contains(page, accountID) || !strings.Contains(page, "The linked account is removed.") {
				t.Fatalf("the user page after unlinking: %s", page)
			}

			// Her second factors: the reset form shows once she has one,
			// and ends her sessions.
			if _, ok := mustConsoleTokens(t, admin, userPath)[userPath+"/factors/reset"]; ok {
				t.Fatal("a factor reset is offered for a user without second factors")
			}
			uma := fw.A.NewClient(t)
			harness.MustSignIn(t, uma, email, harness.FedPassword)
			harness.MustEnrolTOTP(t, uma, harness.FedPassword)
			r = post("/factors/reset", nil)
			harness.MustStatus(t, r, http.StatusSeeOther)
			mustAuditEntry(t, admin, r, adminID, "admin.reset-user-factors", "user", m[1])
			if s := harness.MustOK(t, uma.Get("/api/auth/get-session")); len(s) != 0 {
				t.Fatalf("her session outlived the factor reset: %v", s)
			}
			if page := harness.MustConsolePage(t, admin.Get(userPath), http.StatusOK); !strings.Contains(page, "two-factor off") {
				t.Fatalf("the user page after the reset: %s", page)
			}
		})
	}
}
