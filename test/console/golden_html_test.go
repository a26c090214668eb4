package console

import (
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// update rewrites the golden pages: go test ./test/console/ -run TestGoldenHTML -update
var update = flag.Bool("update", false, "rewrite the golden HTML pages under testdata/golden")

// goldenDir holds one file per page: its status, the headers a page's
// look depends on, and its body, normalised.
const goldenDir = "testdata/golden"

// Ensure the console, the account pages and the hosted pages render the same
// HTML for the same data: on a fresh application with a fixed world (users,
// an organization, a domain, a service key, an OAuth client, a webhook
// endpoint, an identity provider, their audit entries), every page, as a
// platform administrator, an ordinary user and a visitor, with every notice
// a form can end on, is compared with its golden file once what differs
// between runs (ids, instants, tokens, secrets, the port) is normalised.
// The application is its own (MustStart): the pages list what the whole
// application holds.
func TestGoldenHTML(t *testing.T) {
	app := harness.MustStart(t, harness.StoresOnce[0], harness.AdminEnv)
	w := newGoldenWorld(t, app)
	g := &golden{t: t, app: app, seen: map[string]bool{}, named: w.named()}

	// The console, as the platform administrator.
	adm := w.admin
	g.page("console-home", adm, "/console")
	g.page("console-overview", adm, "/console/overview")
	g.page("console-users", adm, "/console/users")
	g.page("console-users-search-email", adm, "/console/users?q="+url.QueryEscape("ada@example.com")+"&by=email&status=active")
	g.page("console-users-search-name", adm, "/console/users?q=Ada&by=name")
	g.page("console-users-banned", adm, "/console/users?status=banned")
	g.page("console-users-limit", adm, "/console/users?limit=1")
	g.page("console-users-bad-limit", adm, "/console/users?limit=abc")
	g.page("console-users-bad-by", adm, "/console/users?by=nothing&q=x")
	g.page("console-user", adm, "/console/users/"+w.userID)
	g.page("console-user-missing", adm, "/console/users/nothing-here")
	g.notices("console-user", adm, "/console/users/"+w.userID, "banned", "unbanned", "revoked", "revoked-all", "reset-sent", "factors-reset", "unlinked", "stopped", "nothing")
	g.page("console-organizations", adm, "/console/organizations")
	g.page("console-organizations-search", adm, "/console/organizations?q=acme")
	g.page("console-organization", adm, "/console/organizations/"+w.orgID)
	g.notices("console-organization", adm, "/console/organizations/"+w.orgID, "updated", "role", "removed", "invited", "revoked", "resent", "nothing")
	g.page("console-domains", adm, "/console/domains")
	g.page("console-domain", adm, "/console/domains/"+w.domainID)
	g.notices("console-domain", adm, "/console/domains/"+w.domainID, "created", "checking", "moved", "verified", "nothing")
	g.page("console-service-keys", adm, "/console/service-keys")
	g.page("console-service-key", adm, "/console/service-keys/"+w.keyID)
	g.notices("console-service-key", adm, "/console/service-keys/"+w.keyID, "revoked", "updated", "registered", "rotated", "nothing")
	g.page("console-oauth-clients", adm, "/console/oauth-clients")
	g.page("console-oauth-client", adm, "/console/oauth-clients/"+w.clientID)
	g.notices("console-oauth-client", adm, "/console/oauth-clients/"+w.clientID, "revoked", "updated", "registered", "rotated", "nothing")
	g.page("console-signing-keys", adm, "/console/signing-keys")
	g.notices("console-signing-keys", adm, "/console/signing-keys", "revoked", "updated", "registered", "rotated", "nothing")
	g.page("console-audit", adm, "/console/audit")
	g.page("console-audit-filtered", adm, "/console/audit?action=user.ban&outcome=success")
	g.page("console-audit-bad", adm, "/console/audit?limit=-3&from=yesterday")
	g.page("console-identity-providers", adm, "/console/identity-providers")
	g.page("console-identity-provider", adm, "/console/identity-providers/"+w.providerID)
	g.notices("console-identity-provider", adm, "/console/identity-providers/"+w.providerID, "created", "updated", "enabled", "disabled", "nothing")
	g.page("console-webhooks", adm, "/console/webhooks")
	g.page("console-webhook", adm, "/console/webhooks/"+w.webhookID)
	g.notices("console-webhook", adm, "/console/webhooks/"+w.webhookID, "enabled", "disabled", "replayed", "nothing")
	g.page("console-missing", adm, "/console/nothing-here")
	g.page("console-users-long-q", adm, "/console/users?q="+strings.Repeat("a", 257))
	g.page("console-users-long-org", adm, "/console/users?org="+strings.Repeat("o", 129))
	g.page("console-users-bad-status", adm, "/console/users?status=sleeping")
	g.page("console-users-bad-verified", adm, "/console/users?verified=maybe")
	g.page("console-users-long-cursor", adm, "/console/users?cursor="+strings.Repeat("c", 513))
	g.page("console-users-bad-cursor", adm, "/console/users?cursor=not-a-cursor")
	g.page("console-users-verified", adm, "/console/users?verified=no&org="+w.orgID)
	g.page("console-users-deleted", adm, "/console/users?deleted=1")
	g.page("console-user-long-id", adm, "/console/users/"+strings.Repeat("u", 129))
	g.page("console-organizations-deleted", adm, "/console/organizations?deleted=1")
	g.page("console-organizations-bad-cursor", adm, "/console/organizations?cursor=nope")
	g.page("console-organization-members-long", adm, "/console/organizations/"+w.orgID+"?members="+strings.Repeat("m", 513))
	g.page("console-organization-members-bad", adm, "/console/organizations/"+w.orgID+"?members=nope")
	g.page("console-domains-deleted", adm, "/console/domains?deleted=1")
	g.page("console-domains-status", adm, "/console/domains?status=pending&org="+w.orgID)
	g.page("console-domains-bad", adm, "/console/domains?status=nope&cursor=nope")
	g.page("console-service-keys-revoked", adm, "/console/service-keys?revoked=1&status=active&limit=5")
	g.page("console-service-keys-bad-limit", adm, "/console/service-keys?limit=abc")
	g.page("console-service-keys-big-limit", adm, "/console/service-keys?limit=1000")
	g.page("console-oauth-clients-deleted", adm, "/console/oauth-clients?deleted=1")
	g.page("console-oauth-clients-bad-limit", adm, "/console/oauth-clients?limit=0")
	g.page("console-signing-keys-bad-limit", adm, "/console/signing-keys?limit=-1&cursor=x")
	g.page("console-identity-providers-deleted", adm, "/console/identity-providers?deleted=1")
	g.page("console-webhooks-deleted", adm, "/console/webhooks?deleted=1")
	g.page("console-webhooks-status", adm, "/console/webhooks?status=failed&cursor=nope")
	g.page("console-audit-limit", adm, "/console/audit?limit=2")
	g.page("console-audit-actor", adm, "/console/audit?actorType=user&actor="+w.userID+"&since=2020-01-01&until=2999-01-01T10:00")
	g.page("console-audit-target", adm, "/console/audit?targetType=organization&target="+w.orgID)
	g.page("console-audit-bad-actor-type", adm, "/console/audit?actorType=robot")
	g.page("console-audit-bad-cursor", adm, "/console/audit?cursor=nope")

	// Forms refused for their input: the page again, with the error.
	g.form("form-users-delete-confirm", adm, "/console/users/"+w.userID, "/console/users/"+w.userID+"/delete", url.Values{"confirm": {"wrong"}})
	g.form("form-users-ban-days", adm, "/console/users/"+w.userID, "/console/users/"+w.userID+"/ban", url.Values{"days": {"abc"}, "reason": {"x"}})
	g.form("form-service-key-empty", adm, "/console/service-keys", "/console/service-keys", url.Values{"name": {""}})
	g.form("form-domain-bad-hostname", adm, "/console/domains", "/console/domains", url.Values{"hostname": {"not a host"}, "organization": {w.orgID}})
	g.form("form-oauth-client-bad", adm, "/console/oauth-clients", "/console/oauth-clients", url.Values{"name": {"x"}, "type": {"odd"}, "redirectUris": {"nope"}})
	g.form("form-organization-delete-confirm", adm, "/console/organizations/"+w.orgID, "/console/organizations/"+w.orgID+"/delete", url.Values{"confirm": {"wrong"}})
	g.form("form-webhook-bad-url", adm, "/console/webhooks", "/console/webhooks", url.Values{"url": {"ftp://x"}})
	g.form("form-identity-provider-bad", adm, "/console/identity-providers", "/console/identity-providers", url.Values{"id": {"Bad Id"}, "preset": {"github"}})
	g.form("form-account-profile-name", w.user, "/account", "/account/profile", url.Values{"name": {strings.Repeat("n", 300)}})
	g.form("form-account-password-short", w.user, "/account", "/account/password", url.Values{"currentPassword": {"wrong"}, "newPassword": {"short"}})
	g.form("form-account-delete-confirm", w.user, "/account", "/account/delete", url.Values{"confirm": {"wrong"}})

	// The account pages, as the administrator and as an ordinary user.
	for who, c := range map[string]*harness.Client{"admin": adm, "user": w.user} {
		g.page("account-profile-"+who, c, "/account")
		g.page("account-security-"+who, c, "/account/security")
		g.page("account-sessions-"+who, c, "/account/sessions")
		g.page("account-linked-"+who, c, "/account/linked")
		g.page("account-organizations-"+who, c, "/account/organizations")
	}
	u := w.user
	g.notices("account-profile", u, "/account", "profile", "email-sent", "email-verified", "password", "password-all", "delete-sent", "nothing")
	g.notices("account-security", u, "/account/security", "totp-on", "totp-off", "passkey-added", "passkey-renamed", "passkey-removed", "stepped-up", "nothing")
	g.notices("account-sessions", u, "/account/sessions", "revoked", "others", "nothing")
	g.notices("account-linked", u, "/account/linked", "linked", "unlinked", "nothing")
	g.notices("account-organizations", u, "/account/organizations", "accepted", "declined", "nothing")
	for _, code := range []string{"email_does_not_match", "account_already_linked_to_different_user", "email_not_verified", "unable_to_link_account", "access_denied", "state_not_found", "state_mismatch", "other"} {
		g.page("account-linked-error-"+code, u, "/account/linked?error="+code)
	}

	// Refusals: an ordinary user in the console, a visitor anywhere.
	g.page("refusal-not-admin", u, "/console/users")
	g.page("refusal-not-admin-form", u, "/console/signing-keys/rotate")
	g.page("refusal-form-token", adm, "/console/signing-keys/rotate")
	anon := app.NewClient(t)
	g.page("refusal-signed-out-console", anon, "/console/users")
	g.page("refusal-signed-out-account", anon, "/account/security")

	// The hosted pages.
	g.page("hosted-home-signed-out", anon, "/")
	g.page("hosted-home-signed-in", u, "/")
	g.page("hosted-sign-in", anon, "/sign-in")
	g.page("hosted-sign-in-callback", anon, "/sign-in?callbackURL="+url.QueryEscape("/console/users"))
	g.page("hosted-sign-in-bad-callback", anon, "/sign-in?callbackURL="+url.QueryEscape("https://evil.example/x"))
	g.page("hosted-sign-in-error", anon, "/sign-in?error=INVALID_EMAIL_OR_PASSWORD")
	g.page("hosted-sign-in-notice", anon, "/sign-in?notice=check-email")
	g.page("hosted-sign-in-signed-in", u, "/sign-in")
	g.page("hosted-sign-up", anon, "/sign-up")
	g.page("hosted-sign-up-error", anon, "/sign-up?error=USER_ALREADY_EXISTS")
	g.page("hosted-forgot-password", anon, "/forgot-password")
	g.page("hosted-forgot-password-notice", anon, "/forgot-password?notice=otp-sent")
	g.page("hosted-reset-password", anon, "/reset-password")
	g.page("hosted-reset-password-token", anon, "/reset-password?token=some-token")
	g.page("hosted-reset-password-error", anon, "/reset-password?error=INVALID_TOKEN")
	g.page("hosted-two-factor-signed-out", anon, "/two-factor")
	g.page("hosted-two-factor-signed-in", u, "/two-factor")
	g.page("hosted-consent-bad", u, "/consent")
	g.page("hosted-consent", u, w.consentPath(t))
	g.page("hosted-sign-out-signed-in", u, "/sign-out")
	g.page("hosted-sign-out-signed-out", anon, "/sign-out")
	g.page("hosted-sign-out-done", anon, "/sign-out?done=1")
	g.page("hosted-missing", anon, "/nothing-here")

	// Impersonation: the banner on the console's home and the account pages.
	imp := app.NewClient(t)
	harness.MustSignIn(t, imp, harness.AdminEmail, harness.AdminPassword)
	harness.MustStatus(t, consoleFormPost(t, imp, "/console/users/"+w.userID, "/console/users/"+w.userID+"/impersonate", nil), http.StatusSeeOther)
	g.page("impersonating-console", imp, "/console")
	g.page("impersonating-console-users", imp, "/console/users")
	g.page("impersonating-account", imp, "/account")
	g.page("impersonating-form", imp, "/console/users/"+w.userID+"/ban")

	g.mustNoStale()
}

// goldenWorld is the fixed data the pages show.
type goldenWorld struct {
	app                                                *harness.App
	admin, user                                        *harness.Client
	adminID, userID, bannedID, plainID                 string
	orgID, domainID, keyID, clientID                   string
	webhookID, providerID, consentClient, consentRedir string
}

// named are the world's ids by name: a page shows them by these names
// whatever it shows before them.
func (w *goldenWorld) named() map[string]string {
	return map[string]string{w.adminID: "ADMIN-ID", w.userID: "ADA-ID", w.bannedID: "BOB-ID", w.plainID: "CY-ID",
		w.orgID: "ORG-ID", w.domainID: "DOMAIN-ID", w.keyID: "KEY-ID", w.clientID: "CLIENT-ID", w.webhookID: "WEBHOOK-ID"}
}

func newGoldenWorld(t *testing.T, app *harness.App) *goldenWorld {
	t.Helper()
	w := &goldenWorld{app: app}
	w.admin, w.adminID = harness.MustAdmin(t, app)
	w.user, w.userID = harness.MustVerifiedUser(t, app, "Ada Lovelace", "ada@example.com", harness.UserPassword)
	_, w.bannedID = harness.MustPlainUser(t, app, "Bob Banned", "bob@example.com", harness.UserPassword)
	_, w.plainID = harness.MustPlainUser(t, app, "Cy Plain", "cy@example.com", harness.UserPassword)
	harness.MustOK(t, w.admin.Post(harness.AdminPath("ban-user"), harness.MustJSON(t, map[string]any{"userId": w.bannedID, "banReason": "spam"})))

	org := harness.MustCreateOrg(t, w.user, "Acme Corp", "acme")
	w.orgID = harness.MustID(t, org)
	harness.MustInvite(t, w.user, w.orgID, "cy@example.com", "member")

	r := consoleFormPost(t, w.admin, "/console/domains", "/console/domains", url.Values{"hostname": {"login.acme.example.com"}, "organization": {w.orgID}})
	harness.MustStatus(t, r, http.StatusSeeOther)
	id, _, _ := strings.Cut(strings.TrimPrefix(r.Header.Get("Location"), "/console/domains/"), "?")
	w.domainID = id

	r = w.admin.Post("/api/admin/service-keys", jsonBody("name", "Billing", "scopes", raw(`["users:read"]`)))
	harness.MustStatus(t, r, http.StatusCreated)
	w.keyID = r.JSON(t)["id"].(string)

	r = w.admin.Post("/api/admin/oauth-clients", `{"name":"Acme Web","type":"confidential","redirectUris":["https://rp.example.com/callback"]}`)
	harness.MustStatus(t, r, http.StatusCreated)
	w.clientID = r.JSON(t)["clientId"].(string)
	w.consentClient, w.consentRedir = w.clientID, "https://rp.example.com/callback"

	r = w.admin.Post("/api/admin/webhooks", jsonBody("url", "https://hooks.example.com/in"))
	harness.MustStatus(t, r, http.StatusCreated)
	w.webhookID = r.JSON(t)["id"].(string)

	w.providerID = "github-golden"
	harness.MustStatus(t, w.admin.Post("/api/admin/identity-providers", matrixProvider(w.providerID)), http.StatusCreated)
	return w
}

// consentPath is the consent page the OAuth client's authorization request
// leads the user to.
func (w *goldenWorld) consentPath(t *testing.T) string {
	t.Helper()
	q := url.Values{"response_type": {"code"}, "client_id": {w.consentClient}, "redirect_uri": {w.consentRedir},
		"scope": {"openid profile email"}, "state": {"st-1"}, "nonce": {"no-1"},
		"code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"}}
	r := w.user.Get("/api/auth/oauth2/authorize?" + q.Encode())
	harness.MustStatus(t, r, http.StatusFound)
	loc, err := url.Parse(r.Header.Get("Location"))
	if err != nil || loc.Path != "/consent" {
		t.Fatalf("authorize: Location = %q, want the consent page", r.Header.Get("Location"))
	}
	return loc.RequestURI()
}

// golden compares pages with their files.
type golden struct {
	t     *testing.T
	app   *harness.App
	named map[string]string // the world's ids, by name
	ids   map[string]string // the page's other ids, by the order it shows them
	seen  map[string]bool   // the files compared
}

// notices compares page?done=what for each what.
func (g *golden) notices(name string, c *harness.Client, path string, whats ...string) {
	g.t.Helper()
	for _, what := range whats {
		g.page(name+"-done-"+what, c, path+"?done="+what)
	}
}

// form posts fields to action with the token of its form on page, as c,
// and compares the answer with the file name.
func (g *golden) form(name string, c *harness.Client, page, action string, fields url.Values) {
	g.t.Helper()
	g.compare(name, "POST "+action, consoleFormPost(g.t, c, page, action, fields))
}

// page GETs path as c and compares the answer with the file name.
func (g *golden) page(name string, c *harness.Client, path string) {
	g.t.Helper()
	if strings.HasSuffix(path, "/rotate") || strings.HasSuffix(path, "/ban") {
		g.compare(name, "POST "+path, consolePost(c, path, url.Values{"_token": {"forged"}}))
		return
	}
	g.compare(name, "GET "+path, c.Get(path))
}

// compare compares r, the answer to request, with the file name.
func (g *golden) compare(name, request string, r *harness.Response) {
	g.t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nstatus: %d\n", request, r.Status)
	for _, h := range []string{"Location", "Content-Type", "Content-Security-Policy", "Cache-Control", "Referrer-Policy", "X-Frame-Options", "X-Content-Type-Options"} {
		if v := r.Header.Get(h); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", h, v)
		}
	}
	b.WriteString("\n")
	b.Write(r.Body)
	g.ids = map[string]string{}
	got := g.normalise(b.String())
	file := filepath.Join(goldenDir, name+".html")
	g.seen[name+".html"] = true
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			g.t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			g.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		g.t.Errorf("%s: %v (run with -update to write it)", name, err)
		return
	}
	if !bytes.Equal(want, []byte(got)) {
		g.t.Errorf("%s (%s) differs from %s:\n%s", name, request, file, firstDifference(string(want), got))
	}
}

// mustNoStale fails on a golden file no page was compared with.
func (g *golden) mustNoStale() {
	g.t.Helper()
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.html"))
	if err != nil {
		g.t.Fatal(err)
	}
	for _, f := range files {
		if !g.seen[filepath.Base(f)] {
			if *update {
				_ = os.Remove(f)
				continue
			}
			g.t.Errorf("%s: no page compared with it", f)
		}
	}
}

// firstDifference shows the first line where want and got differ.
func firstDifference(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n want: %s\n  got: %s", i+1, w, g)
		}
	}
	return "(same lines, different bytes)"
}

var (
	goldenUUID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// goldenHidden is a form token, a nonce or a code: a hidden input's
	// value; goldenSecret a long run of token characters.
	goldenHidden  = regexp.MustCompile(`(name="(?:_token|state|nonce|code|csrf)" value=")[^"]*(")`)
	goldenRFC3339 = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})`)
	goldenWhen    = regexp.MustCompile(`\d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2})? UTC`)
	// goldenHour and goldenDay are the overview charts' labels: the last
	// 24 hours and 30 days end now.
	goldenHour     = regexp.MustCompile(`\b([01]\d|2[0-3]):00\b`)
	goldenDay      = regexp.MustCompile(`\b\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b`)
	goldenDate     = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`)
	goldenPort     = regexp.MustCompile(`(127\.0\.0\.1|localhost):\d+`)
	goldenSecret   = regexp.MustCompile(`\b(gh[a-z]*_|sk_|whsec_|gk_)?[A-Za-z0-9_-]{32,}\b`)
	goldenPrefixed = regexp.MustCompile(`\bgh_[a-z]+_[A-Za-z0-9_-]+`)
	goldenLast4    = regexp.MustCompile(`…[A-Za-z0-9_-]{4}</code>`)
	goldenHex      = regexp.MustCompile(`\b[0-9a-f]{24}\b`)
	goldenQuery    = regexp.MustCompile(`([?&;](?:amp;)?(?:state|nonce|code_challenge|token|callbackURL_sig|sig)=)[^&"'\s<]*`)
)

// nameOf replaces a value by its name in the world, or by kind-n, n the order it was first met in.
func (g *golden) nameOf(kind string) func(string) string {
	return func(v string) string {
		if n, ok := g.named[v]; ok {
			return n
		}
		if n, ok := g.ids[v]; ok {
			return n
		}
		n := fmt.Sprintf("%s-%d", kind, len(g.ids)+1)
		g.ids[v] = n
		return n
	}
}

// normalise replaces what changes between runs: each id of the world by
// its name, any other by the order the page shows it (so a page that links
// the id it shows says so), instants, tokens and secrets, and the server's
// port.
func (g *golden) normalise(s string) string {
	s = goldenUUID.ReplaceAllStringFunc(s, g.nameOf("ID"))
	s = goldenPrefixed.ReplaceAllStringFunc(s, g.nameOf("KEY"))
	s = goldenHex.ReplaceAllString(s, "HEX")
	s = goldenLast4.ReplaceAllString(s, "…LAST4</code>")
	s = goldenHidden.ReplaceAllString(s, "${1}TOKEN${2}")
	s = goldenQuery.ReplaceAllString(s, "${1}TOKEN")
	s = goldenRFC3339.ReplaceAllString(s, "INSTANT")
	s = goldenWhen.ReplaceAllString(s, "WHEN")
	s = goldenPort.ReplaceAllString(s, "HOST")
	s = goldenSecret.ReplaceAllStringFunc(s, func(v string) string {
		if strings.Contains(v, "ID-") || !strings.ContainsAny(v, "0123456789") {
			return v // a name of words, not a token
		}
		return g.nameOf("SECRET")(v)
	})
	s = goldenDate.ReplaceAllString(s, "DATE")
	s = goldenHour.ReplaceAllString(s, "HH:00")
	s = goldenDay.ReplaceAllString(s, "D MON")
	return s
}
