package test

import (
	"html"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"testing"
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
	for _, s := range storesOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			fw := mustFedWorld(t, s, nil)
			const email = "uma@upstream.example"
			mustVerifiedUser(t, fw.b, "Uma Upstream", email, fedPassword)
			fw.signInThroughB(t, newStrictBrowser(t, fw.a), email, map[string]any{"callbackURL": "/account"})
			admin := fw.adminA
			adminID := mustOK(t, admin.get("/api/auth/get-session"))["user"].(map[string]any)["id"].(string)

			list := mustConsolePage(t, admin.get("/console/users?q="+url.QueryEscape(email)), http.StatusOK)
			m := regexp.MustCompile(`href="/console/users/([^"]+)"`).FindStringSubmatch(consoleRows(list))
			if m == nil {
				t.Fatalf("the search does not find %s: %s", email, list)
			}
			userPath := "/console/users/" + m[1]
			page := mustConsolePage(t, admin.get(userPath), http.StatusOK)
			acct := consoleLinkedAccount.FindStringSubmatch(page)
			if acct == nil || !strings.Contains(page, fw.provider) {
				t.Fatalf("the user page shows no linked account to unlink: %s", page)
			}
			accountID := html.UnescapeString(acct[1])
			post := func(action string, fields url.Values) *response {
				t.Helper()
				if fields == nil {
					fields = url.Values{}
				}
				fields.Set("_token", mustConsoleTokens(t, admin, userPath)[userPath+action])
				return consolePost(admin, userPath+action, fields)
			}

			// Her only way to sign in: refused, and kept.
			if body := mustConsolePage(t, post("/linked/unlink", url.Values{"account": {accountID}}), http.StatusConflict); !strings.Contains(body, "Conflict") {
				t.Fatalf("unlinking the last way to sign in: %s", body)
			}
			if page := mustConsolePage(t, admin.get(userPath), http.StatusOK); !strings.Contains(page, accountID) {
				t.Fatal("a refused unlink removed the account")
			}
			// A missing or unknown account id: refused, naming the field.
			if body := mustConsolePage(t, post("/linked/unlink", nil), http.StatusBadRequest); !strings.Contains(body, "body.account") {
				t.Fatalf("unlink without an account: %s", body)
			}
			mustConsolePage(t, post("/linked/unlink", url.Values{"account": {"no-such-account"}}), http.StatusNotFound)

			// A password reset gives her a password; then the link can go.
			r := post("/password-reset", nil)
			mustStatus(t, r, http.StatusSeeOther)
			mustAuditEntry(t, admin, r, adminID, "admin.send-password-reset", "user", m[1])
			link, err := url.Parse(mustLink(t, fw.a, email, "Reset your"))
			if err != nil {
				t.Fatal(err)
			}
			mustStatusTrue(t, fw.a.client(t).post("/api/auth/reset-password", mustJSON(t, map[string]string{"token": path.Base(link.Path), "newPassword": fedPassword})))
			r = post("/linked/unlink", url.Values{"account": {accountID}})
			mustStatus(t, r, http.StatusSeeOther)
			if got := r.Header.Get("Location"); got != userPath+"?done=unlinked" {
				t.Fatalf("unlink Location = %q", got)
			}
			mustAuditEntry(t, admin, r, adminID, "admin.unlink-account", "linked_account", accountID)
			if page := mustConsolePage(t, admin.get(userPath+"?done=unlinked"), http.StatusOK); strings.Contains(page, accountID) || !strings.Contains(page, "The linked account is removed.") {
				t.Fatalf("the user page after unlinking: %s", page)
			}

			// Her second factors: the reset form shows once she has one,
			// and ends her sessions.
			if _, ok := mustConsoleTokens(t, admin, userPath)[userPath+"/factors/reset"]; ok {
				t.Fatal("a factor reset is offered for a user without second factors")
			}
			uma := fw.a.client(t)
			mustSignIn(t, uma, email, fedPassword)
			mustEnrolTOTP(t, uma, fedPassword)
			r = post("/factors/reset", nil)
			mustStatus(t, r, http.StatusSeeOther)
			mustAuditEntry(t, admin, r, adminID, "admin.reset-user-factors", "user", m[1])
			if s := mustOK(t, uma.get("/api/auth/get-session")); len(s) != 0 {
				t.Fatalf("her session outlived the factor reset: %v", s)
			}
			if page := mustConsolePage(t, admin.get(userPath), http.StatusOK); !strings.Contains(page, "two-factor off") {
				t.Fatalf("the user page after the reset: %s", page)
			}
		})
	}
}
