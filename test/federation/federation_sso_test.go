package federation

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/dnsresolver/dnstest"
	"github.com/gatehouse/gatehouse/test/harness"
)

// Enterprise SSO end to end: an organization of Gatehouse A proves a
// domain by DNS (a loopback DNS server), binds it to its own identity
// provider (Gatehouse B), and requires it. An address at the domain is
// routed to B and provisioned into the organization; a password is refused
// for it; B may not speak for another domain; and when the domain stops
// verifying, routing and the requirement stop.
func TestFederationSSO_domain_routed_provisioned_required_then_lost(t *testing.T) {
	t.Parallel()
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			dns := dnstest.Start(t)
			w := harness.MustFedWorldOn(t, s, harness.Env(harness.DNSLifecycleEnv, map[string]string{"GATEHOUSE_DNS_NAMESERVER": dns.Addr()}), "acme-sso")
			// A's administrator (signed in by the world) and a domains key.
			adminID := harness.MustUser(t, harness.MustSession(t, w.AdminA))["id"].(string)
			key := harness.MustCreateKey(t, w.AdminA, map[string]any{"name": "domains backend", "scopes": []string{"domains:read", "domains:write"}})
			k := &harness.DomainKit{T: t, App: w.A, Admin: w.AdminA, AdminID: adminID, Secret: key["secret"].(string), KeyID: harness.MustID(t, key)}
			harness.StartDomainVerifier(t, w.A)
			orgKey := harness.MustCreateKey(t, k.Admin, map[string]any{"name": "orgs", "scopes": []string{"organizations:read", "organizations:write"}})["secret"].(string)
			trusted := func(method, path, body string) *harness.Response {
				return w.A.NewClient(t).Do(method, path, body, "Authorization", "Bearer "+orgKey)
			}
			r := trusted(http.MethodPost, harness.OrgsPath, harness.MustJSON(t, map[string]any{"name": "Acme", "slug": "acme", "ownerUserId": k.AdminID}))
			harness.MustStatus(t, r, http.StatusCreated)
			org := harness.MustID(t, r.JSON(t))

			// The organization proves acme.example.com.
			d := k.MustCreate("acme.example.com", org)
			domainID := harness.MustID(t, d)
			name, value := harness.Challenge(t, d)
			dns.SetTXT(name, value)
			k.WaitStatus(domainID, "verified")

			// Its provider, registered by the organization's backend: B, bound
			// to the domain, required, members join as "member".
			r = trusted(http.MethodPost, harness.OrgsPath+"/"+org+"/identity-providers", harness.MustJSON(t, map[string]any{
				"id": w.Provider, "preset": "oidc", "name": "Acme SSO", "issuer": w.B.URL + "/api/auth", "clientId": w.HTTP.ID,
				"clientSecret": w.HTTP.Secret, "domains": []string{domainID}, "requireSso": true, "defaultRole": "member"}))
			harness.MustStatus(t, r, http.StatusCreated)
			if strings.Contains(string(r.Body), w.HTTP.Secret) || r.JSON(t)["organizationId"] != org {
				t.Fatalf("the organization's provider: %s", r.Body)
			}
			if r := trusted(http.MethodGet, harness.OrgsPath+"/"+org+"/identity-providers", ""); !strings.Contains(string(r.Body), `"id":"acme-sso"`) {
				t.Fatalf("the organization's providers: %d %s", r.Status, r.Body)
			}
			// Another organization's domain cannot be bound.
			other := trusted(http.MethodPost, harness.OrgsPath, harness.MustJSON(t, map[string]any{"name": "Other", "slug": "other", "ownerUserId": k.AdminID}))
			harness.MustStatus(t, other, http.StatusCreated)
			r = trusted(http.MethodPost, harness.OrgsPath+"/"+harness.MustID(t, other.JSON(t))+"/identity-providers", harness.MustJSON(t, map[string]any{
				"id": "thief", "preset": "oidc", "issuer": w.B.URL + "/api/auth", "clientId": "x", "clientSecret": "y", "domains": []string{domainID}}))
			harness.MustStatus(t, r, http.StatusBadRequest)
			harness.MustVerifiedUser(t, w.B, "Ada Acme", "ada@acme.example.com", harness.FedPassword)
			harness.MustVerifiedUser(t, w.B, "Eve Other", "eve@other.example.com", harness.FedPassword)

			// sign-in/sso by address: routed to B, with the address as login_hint.
			br := harness.NewStrictBrowser(t, w.A)
			authURL := w.Start(t, br, "/api/auth/sign-in/sso", map[string]any{"email": "ada@acme.example.com", "callbackURL": "/account"})
			if u, _ := url.Parse(authURL); !strings.HasPrefix(authURL, w.B.URL) || u.Query().Get("login_hint") != "ada@acme.example.com" {
				t.Fatalf("sign-in/sso sent the browser to %s, want B with login_hint", authURL)
			}
			page := w.Finish(t, br, w.AuthorizeAtB(t, br, authURL, "ada@acme.example.com"))
			if page.URL.Path != "/account" {
				t.Fatalf("SSO sign-in landed at %s (visited %v): %s", page.URL, br.Seen, page.Body)
			}
			ada := w.SessionAtA(t, br)
			if ada == nil || ada["email"] != "ada@acme.example.com" || ada["emailVerified"] != true {
				t.Fatalf("A's session user = %v", ada)
			}
			// Provisioned just in time, with the default role.
			r = trusted(http.MethodGet, harness.OrgsPath+"/"+org+"/members", "")
			harness.MustStatus(t, r, http.StatusOK)
			if !strings.Contains(string(r.Body), ada["id"].(string)) || !strings.Contains(string(r.Body), `"member"`) {
				t.Fatalf("members after the SSO sign-in: %s", r.Body)
			}

			// sign-in/social with a loginHint at the domain is routed there too.
			br2 := harness.NewStrictBrowser(t, w.A)
			if u := w.Start(t, br2, "/api/auth/sign-in/social", map[string]any{"provider": "anything", "loginHint": "bob@acme.example.com"}); !strings.HasPrefix(u, w.B.URL) {
				t.Fatalf("sign-in/social with a loginHint at the domain went to %s, want B", u)
			}

			// A password is refused for the domain, sign-up too, and audited.
			c := w.A.NewClient(t)
			harness.MustCode(t, c.Post("/api/auth/sign-in/email", harness.MustCredentials(t, "ada@acme.example.com", "whatever password 1")), http.StatusForbidden, "SSO_REQUIRED")
			harness.MustCode(t, c.Post("/api/auth/sign-up/email", harness.MustJSON(t, map[string]any{"email": "new@acme.example.com", "password": harness.FedPassword, "name": "New"})),
				http.StatusForbidden, "SSO_REQUIRED")
			if r := w.AdminA.Get("/api/admin/audit-log?action=sign-in.sso-required"); !strings.Contains(string(r.Body), `"sign-in.sso-required"`) {
				t.Fatalf("audit of the refusal: %s", r.Body)
			}

			// B may not speak for an address outside the organization's domains.
			br3 := harness.NewStrictBrowser(t, w.A)
			authURL = w.Start(t, br3, "/api/auth/sign-in/sso", map[string]any{"providerId": "acme-sso", "callbackURL": "/account", "errorCallbackURL": "/sign-in"})
			page = w.Finish(t, br3, w.AuthorizeAtB(t, br3, authURL, "eve@other.example.com"))
			if errorOf(page) != "email_outside_sso_domains" || w.SessionAtA(t, br3) != nil {
				t.Fatalf("an address outside the domains ended at %s with a session %v", page.URL, w.SessionAtA(t, br3))
			}

			// The domain stops verifying: routing and the requirement stop.
			// A's clock moves past the grace period; B's ID tokens, an hour
			// long, are still good on it.
			dns.RemoveTXT(name)
			k.WaitFor(domainID, "TXT missing", func(d map[string]any) bool { return harness.Record(t, d, "TXT")["status"] == "missing" })
			w.A.Clock.Advance(harness.DNSGrace + time.Second)
			k.WaitStatus(domainID, "failed")
			r = c.Post("/api/auth/sign-in/sso", harness.MustJSON(t, map[string]any{"email": "ada@acme.example.com"}))
			harness.MustCode(t, r, http.StatusNotFound, "SSO_PROVIDER_NOT_FOUND")
			harness.MustCode(t, c.Post("/api/auth/sign-in/email", harness.MustCredentials(t, "ada@acme.example.com", "whatever password 1")), http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
			// And the provider no longer signs in even its own account.
			br4 := harness.NewStrictBrowser(t, w.A)
			br4.Hc.Jar = br.Hc.Jar
			authURL = w.Start(t, br4, "/api/auth/sign-in/social", map[string]any{"provider": "acme-sso", "callbackURL": "/account", "errorCallbackURL": "/sign-in"})
			page = w.Finish(t, br4, w.AuthorizeAtB(t, br4, authURL, "ada@acme.example.com"))
			if errorOf(page) != "email_outside_sso_domains" {
				t.Fatalf("a sign-in through the provider of a failed domain ended at %s", page.URL)
			}
		})
	}
}
