package process

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// The upstream users of the federation suite, at Gatehouse B.
const (
	socialUpstreamPassword = "upstream client passphrase 9"
	socialUpstreamEmail    = "uma.upstream@clients.example.test"
	socialLinkEmail        = "lin.linker@clients.example.test"
)

// Ensure the official better-auth client signs in through Gatehouse's social
// wire with real upstream providers (test/clients/social.test.mjs), on
// SQLite and PostgreSQL: Gatehouse A, the service under test, federates
// with Gatehouse B, a second Gatehouse acting as an OpenID provider that
// knows A only as a registered client; and, from inside the Node suite,
// with oauth2-mock-server (an OpenID provider nobody here wrote) through the
// google preset, and with the same mock plus a small GitHub-like API
// through the github preset.
//
// This test prepares what needs Go: A and B, A registered at B as a
// first-party confidential client, B registered at A as provider
// "gatehouse-b" (trusted for linking), two verified users at B, and A's
// verified platform administrator, whose credentials the suite uses to
// register its mock providers.
func TestBetterAuthClient_federation(t *testing.T) {
	if testing.Short() {
		t.Skip("Node client suite skipped in -short mode")
	}
	node := harness.MustTool(t, "node")
	harness.MustNpmCI(t, harness.MustTool(t, "npm"))
	for _, s := range []harness.Store{harness.StoreSQLite, harness.StorePostgres} {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			a := harness.MustStart(t, s, harness.AdminEnv)
			// Both apps live on 127.0.0.1, where a browser keeps one cookie
			// jar for every port: B's cookies have another prefix.
			b := harness.MustStart(t, harness.StoreMemory, harness.Env(harness.AdminEnv, map[string]string{"GATEHOUSE_COOKIE_PREFIX": "upstream"}))
			mailbox := httptest.NewServer(a.Mail.Handler())
			t.Cleanup(mailbox.Close)

			const provider = "gatehouse-b"
			adminB, _ := harness.MustAdmin(t, b)
			client := harness.MustRegisterStrictClient(t, adminB, "Gatehouse A", "confidential", true, a.URL+"/api/auth/callback/"+provider)
			adminA, _ := harness.MustAdmin(t, a)
			r := adminA.Post("/api/admin/identity-providers", harness.MustJSON(t, map[string]any{
				"id": provider, "preset": "oidc", "name": "Gatehouse B", "issuer": b.URL + "/api/auth",
				"clientId": client.ID, "clientSecret": client.Secret,
				"scopes":            []string{"openid", "email", "profile", "offline_access"},
				"trustedForLinking": true,
			}))
			harness.MustStatus(t, r, http.StatusCreated)
			_, upstreamID := harness.MustVerifiedUser(t, b, "Uma Upstream", socialUpstreamEmail, socialUpstreamPassword)
			_, linkID := harness.MustVerifiedUser(t, b, "Lin Linker", socialLinkEmail, socialUpstreamPassword)

			ctx, cancel := context.WithTimeout(t.Context(), harness.NodeTestTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "social.test.mjs")
			cmd.Dir = harness.ClientsDir
			cmd.Env = append(os.Environ(), "NO_COLOR=1",
				"GATEHOUSE_URL="+a.URL, "MAILBOX_URL="+mailbox.URL,
				"GATEHOUSE_TEST_ADMIN_EMAIL="+harness.AdminEmail, "GATEHOUSE_TEST_ADMIN_PASSWORD="+harness.AdminPassword,
				"GATEHOUSE_TEST_UPSTREAM_URL="+b.URL, "GATEHOUSE_TEST_UPSTREAM_PROVIDER="+provider,
				"GATEHOUSE_TEST_UPSTREAM_EMAIL="+socialUpstreamEmail, "GATEHOUSE_TEST_UPSTREAM_ID="+upstreamID,
				"GATEHOUSE_TEST_UPSTREAM_LINK_EMAIL="+socialLinkEmail, "GATEHOUSE_TEST_UPSTREAM_LINK_ID="+linkID,
				"GATEHOUSE_TEST_UPSTREAM_PASSWORD="+socialUpstreamPassword)
			cmd.WaitDelay = 5 * time.Second
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			start := time.Now()
			err := cmd.Run()
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			logs := func() string {
				return "\n--- suite output ---\n" + out.String() + "\n--- Gatehouse A's log ---\n" + a.Logs.String() + "\n--- Gatehouse B's log ---\n" + b.Logs.String()
			}
			if err != nil {
				t.Fatalf("node --test social.test.mjs on %s: %v%s", s, err, logs())
			}
			// The suite skips itself when its environment is missing (as under
			// TestBetterAuthClient's "node --test ."): here nothing may skip.
			if pass, skipped := nodeCount(out.String(), "pass"), nodeCount(out.String(), "skipped"); pass == 0 || skipped != 0 {
				t.Fatalf("node --test social.test.mjs on %s: %d passed, %d skipped; want every test run%s", s, pass, skipped, logs())
			}
			t.Logf("node --test social.test.mjs on %s (%s):\n%s", s, time.Since(start).Round(time.Millisecond), out.String())
		})
	}
}

// nodeCount reads a count of node --test's summary ("ℹ pass 12"), or -1.
func nodeCount(output, what string) int {
	m := regexp.MustCompile(`(?m)^\S* ?` + what + ` (\d+)\s*$`).FindStringSubmatch(output)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
