package test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/adapters/dnsresolver/dnstest"
)

// Enterprise SSO end to end: an organization of Gatehouse A proves a
// domain by DNS (a loopback DNS server), binds it to its own identity
// provider (Gatehouse B), and requires it. An address at the domain is
// routed to B and provisioned into the organization; a password is refused
// for it; B may not speak for another domain; and when the domain stops
// verifying, routing and the requirement stop.
func TestFederationSSO_domain_routed_provisioned_required_then_lost(t *testing.T) {
	t.Parallel()
	for _, s := range storesOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			dns := dnstest.Start(t)
			w := mustFedWorldOn(t, s, fwEnv(dnsLifecycleEnv, map[string]string{"GATEHOUSE_DNS_NAMESERVER": dns.Addr()}), "acme-sso")
			// A's administrator (signed in by the world) and a domains key.
			adminID := mustUser(t, mustSession(t, w.adminA))["id"].(string)
			key := mustCreateKey(t, w.adminA, map[string]any{"name": "domains backend", "scopes": []string{"domains:read", "domains:write"}})
			k := &domainKit{t: t, app: w.a, admin: w.adminA, adminID: adminID, secret: key["secret"].(string), keyID: mustID(t, key)}
			startDomainVerifier(t, w.a)
			orgKey := mustCreateKey(t, k.admin, map[string]any{"name": "orgs", "scopes": []string{"organizations:read", "organizations:write"}})["secret"].(string)
			trusted := func(method, path, body string) *response {
				return w.a.client(t).do(method, path, body, "Authorization", "Bearer "+orgKey)
			}
			r := trusted(http.MethodPost, orgsPath, mustJSON(t, map[string]any{"name": "Acme", "slug": "acme", "ownerUserId": k.adminID}))
			mustStatus(t, r, http.StatusCreated)
			org := mustID(t, r.JSON(t))

			// The organization proves acme.example.com.
			d := k.mustCreate("acme.example.com", org)
			domainID := mustID(t, d)
			name, value := challenge(t, d)
			dns.SetTXT(name, value)
			k.waitStatus(domainID, "verified")

			// Its provider, registered by the organization's backend: B, bound
			// to the domain, required, members join as "member".
			r = trusted(http.MethodPost, orgsPath+"/"+org+"/identity-providers", mustJSON(t, map[string]any{
				"id": w.provider, "preset": "oidc", "name": "Acme SSO", "issuer": w.b.URL + "/api/auth", "clientId": w.client.ID,
				"clientSecret": w.client.Secret, "domains": []string{domainID}, "requireSso": true, "defaultRole": "member"}))
			mustStatus(t, r, http.StatusCreated)
			if strings.Contains(string(r.Body), w.client.Secret) || r.JSON(t)["organizationId"] != org {
				t.Fatalf("the organization's provider: %s", r.Body)
			}
			if r := trusted(http.MethodGet, orgsPath+"/"+org+"/identity-providers", ""); !strings.Contains(string(r.Body), `"id":"acme-sso"`) {
				t.Fatalf("the organization's providers: %d %s", r.Status, r.Body)
			}
			// Another organization's domain cannot be bound.
			other := trusted(http.MethodPost, orgsPath, mustJSON(t, map[string]any{"name": "Other", "slug": "other", "ownerUserId": k.adminID}))
			mustStatus(t, other, http.StatusCreated)
			r = trusted(http.MethodPost, orgsPath+"/"+mustID(t, other.JSON(t))+"/identity-providers", mustJSON(t, map[string]any{
				"id": "thief", "preset": "oidc", "issuer": w.b.URL + "/api/auth", "clientId": "x", "clientSecret": "y", "domains": []string{domainID}}))
			mustStatus(t, r, http.StatusBadRequest)
			mustVerifiedUser(t, w.b, "Ada Acme", "ada@acme.example.com", fedPassword)
			mustVerifiedUser(t, w.b, "Eve Other", "eve@other.example.com", fedPassword)

			// sign-in/sso by address: routed to B, with the address as login_hint.
			br := newStrictBrowser(t, w.a)
			authURL := w.start(t, br, "/api/auth/sign-in/sso", map[string]any{"email": "ada@acme.example.com", "callbackURL": "/account"})
			if u, _ := url.Parse(authURL); !strings.HasPrefix(authURL, w.b.URL) || u.Query().Get("login_hint") != "ada@acme.example.com" {
				t.Fatalf("sign-in/sso sent the browser to %s, want B with login_hint", authURL)
			}
			page := w.finish(t, br, w.authorizeAtB(t, br, authURL, "ada@acme.example.com"))
			if page.URL.Path != "/account" {
				t.Fatalf("SSO sign-in landed at %s (visited %v): %s", page.URL, br.seen, page.Body)
			}
			ada := w.sessionAtA(t, br)
			if ada == nil || ada["email"] != "ada@acme.example.com" || ada["emailVerified"] != true {
				t.Fatalf("A's session user = %v", ada)
			}
			// Provisioned just in time, with the default role.
			r = trusted(http.MethodGet, orgsPath+"/"+org+"/members", "")
			mustStatus(t, r, http.StatusOK)
			if !strings.Contains(string(r.Body), ada["id"].(string)) || !strings.Contains(string(r.Body), `"member"`) {
				t.Fatalf("members after the SSO sign-in: %s", r.Body)
			}

			// sign-in/social with a loginHint at the domain is routed there too.
			br2 := newStrictBrowser(t, w.a)
			if u := w.start(t, br2, "/api/auth/sign-in/social", map[string]any{"provider": "anything", "loginHint": "bob@acme.example.com"}); !strings.HasPrefix(u, w.b.URL) {
				t.Fatalf("sign-in/social with a loginHint at the domain went to %s, want B", u)
			}

			// A password is refused for the domain, sign-up too, and audited.
			c := w.a.client(t)
			mustCode(t, c.post("/api/auth/sign-in/email", mustCredentials(t, "ada@acme.example.com", "whatever password 1")), http.StatusForbidden, "SSO_REQUIRED")
			mustCode(t, c.post("/api/auth/sign-up/email", mustJSON(t, map[string]any{"email": "new@acme.example.com", "password": fedPassword, "name": "New"})),
				http.StatusForbidden, "SSO_REQUIRED")
			if r := w.adminA.get("/api/admin/audit-log?action=sign-in.sso-required"); !strings.Contains(string(r.Body), `"sign-in.sso-required"`) {
				t.Fatalf("audit of the refusal: %s", r.Body)
			}

			// B may not speak for an address outside the organization's domains.
			br3 := newStrictBrowser(t, w.a)
			authURL = w.start(t, br3, "/api/auth/sign-in/sso", map[string]any{"providerId": "acme-sso", "callbackURL": "/account", "errorCallbackURL": "/sign-in"})
			page = w.finish(t, br3, w.authorizeAtB(t, br3, authURL, "eve@other.example.com"))
			if errorOf(page) != "email_outside_sso_domains" || w.sessionAtA(t, br3) != nil {
				t.Fatalf("an address outside the domains ended at %s with a session %v", page.URL, w.sessionAtA(t, br3))
			}

			// The domain stops verifying: routing and the requirement stop.
			dns.RemoveTXT(name)
			k.waitStatus(domainID, "failed")
			r = c.post("/api/auth/sign-in/sso", mustJSON(t, map[string]any{"email": "ada@acme.example.com"}))
			mustCode(t, r, http.StatusNotFound, "SSO_PROVIDER_NOT_FOUND")
			mustCode(t, c.post("/api/auth/sign-in/email", mustCredentials(t, "ada@acme.example.com", "whatever password 1")), http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
			// And the provider no longer signs in even its own account.
			br4 := newStrictBrowser(t, w.a)
			br4.hc.Jar = br.hc.Jar
			authURL = w.start(t, br4, "/api/auth/sign-in/social", map[string]any{"provider": "acme-sso", "callbackURL": "/account", "errorCallbackURL": "/sign-in"})
			page = w.finish(t, br4, w.authorizeAtB(t, br4, authURL, "ada@acme.example.com"))
			if errorOf(page) != "email_outside_sso_domains" {
				t.Fatalf("a sign-in through the provider of a failed domain ended at %s", page.URL)
			}
		})
	}
}
