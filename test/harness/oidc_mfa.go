package harness

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"golang.org/x/oauth2"
)

// StrictAuthClaims are the ID token's claims about the sign-in.
type StrictAuthClaims struct {
	AMR      []string `json:"amr"`
	ACR      string   `json:"acr"`
	AuthTime int64    `json:"auth_time"`
}

// strictCallback checks that page redirects to c's redirect URI with a code
// for flow, and returns that URL.
func (w *StrictWorld) StrictCallback(t testing.TB, b *StrictBrowser, page *StrictPage, c StrictClient, flow StrictFlow) *url.URL {
	t.Helper()
	if page.Status < 300 || page.Status > 399 {
		t.Fatalf("authorization ended at %d %s, not a redirect to %s (visited %v):\n%s", page.Status, page.URL, c.RedirectURI, b.Seen, page.Body)
	}
	loc, err := page.URL.Parse(page.Header.Get("Location"))
	if err != nil || StrictWithoutQuery(loc) != c.RedirectURI {
		t.Fatalf("redirected to %q, want %s", page.Header.Get("Location"), c.RedirectURI)
	}
	if q := loc.Query(); q.Get("error") != "" || q.Get("code") == "" || q.Get("state") != flow.State {
		t.Fatalf("callback %s: want a code and state %s", loc, flow.State)
	}
	return loc
}

// strictSignInPage submits the hosted sign-in form of page.
func (w *StrictWorld) StrictSignInPage(t testing.TB, b *StrictBrowser, page *StrictPage) *StrictPage {
	t.Helper()
	if page.Status != http.StatusOK || page.URL.Path != "/sign-in" {
		t.Fatalf("ended at %d %s, want the sign-in page (visited %v):\n%s", page.Status, page.URL, b.Seen, page.Body)
	}
	f := StrictSignInForm(t, page)
	f.Set(t, "email", w.Email)
	f.Set(t, "password", StrictPassword)
	return b.Submit(page, f, nil)
}

// mustEnableTwoFactor turns two-factor on for the world's user and returns
// the TOTP secret and the backup codes; the enrolment used the previous
// step's code.
func (w *StrictWorld) MustEnableTwoFactor(t *testing.T) ([]byte, []string) {
	t.Helper()
	c := w.App.NewClient(t)
	MustSignIn(t, c, w.Email, StrictPassword)
	en := MustOK(t, c.Post("/api/auth/two-factor/enable", MustJSON(t, map[string]any{"password": StrictPassword})))
	uri, _ := en["totpURI"].(string)
	secret := TOTPSecretOf(t, uri)
	var backups []string
	for _, b := range en["backupCodes"].([]any) {
		backups = append(backups, b.(string))
	}
	MustOK(t, c.Post("/api/auth/two-factor/verify-totp", MustJSON(t, map[string]any{"code": TOTPAt(w.App.Clock, secret, -1)})))
	return secret, backups
}

// strictUserInfoAuth reads amr and acr from userinfo.
func (w *StrictWorld) StrictUserInfoAuth(t testing.TB, tok *oauth2.Token) StrictAuthClaims {
	t.Helper()
	r := w.userinfo(t, tok.AccessToken)
	MustStatus(t, r, http.StatusOK)
	var c StrictAuthClaims
	if err := json.Unmarshal([]byte(r.Body), &c); err != nil {
		t.Fatal(err)
	}
	return c
}
