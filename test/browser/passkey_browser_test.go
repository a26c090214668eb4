package browser

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
	"github.com/gatehouse/gatehouse/test/harness"
)

// passkeyEntry is the page script: the official passkeyClient of
// @better-auth/passkey with better-auth's createAuthClient, as pinned in
// test/clients, bundled by esbuild into window.gh.
const passkeyEntry = `
import { createAuthClient } from "better-auth/client";
import { passkeyClient } from "@better-auth/passkey/client";
export const client = createAuthClient({ baseURL: location.origin, plugins: [passkeyClient()] });
// replay posts the body of the last verify-authentication again, with the
// browser's cookies (the challenge cookie among them).
let last = null;
export async function signInCapturing() {
	return client.signIn.passkey({ fetchOptions: { onRequest(ctx) { last = ctx.body; return ctx; } } });
}
export async function replay() {
	const body = typeof last === "string" ? last : JSON.stringify(last);
	const r = await fetch("/api/auth/passkey/verify-authentication", { method: "POST", credentials: "include",
		headers: { "content-type": "application/json" }, body });
	return { status: r.status, body: await r.json() };
}
`

// mustBundlePasskeyClient bundles passkeyEntry with the pinned packages and
// returns the script.
func mustBundlePasskeyClient(t *testing.T) string {
	t.Helper()
	harness.MustNpmCI(t, harness.MustTool(t, "npm"))
	clients, err := filepath.Abs(harness.ClientsDir)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	entry, out := filepath.Join(dir, "entry.mjs"), filepath.Join(dir, "bundle.js")
	if err := os.WriteFile(entry, []byte(passkeyEntry), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), filepath.Join(clients, "node_modules", ".bin", "esbuild"), entry, // #nosec G204 -- the pinned esbuild
		"--bundle", "--format=iife", "--global-name=gh", "--platform=browser", "--outfile="+out)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(clients, "node_modules"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("esbuild: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pkBrowserEval awaits the promise expression js in the page and returns
// its JSON-encoded value.
func pkBrowserEval(t *testing.T, ctx context.Context, js string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(async () => JSON.stringify(await (`+js+`)))()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// Ensure the official passkeyClient works unmodified in Chromium with a
// virtual authenticator (CTAP2, internal, resident keys, user
// verification): register a passkey, sign out, sign in with it, and the
// session works; a replayed challenge and a wrong origin are refused.
func TestPasskeyBrowser_official_client(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	chromium := chromiumPath(t)
	bundle := mustBundlePasskeyClient(t)
	// localhost is the RP ID. The same service also answers on a second
	// port: that origin may call the framework (a trusted origin), and a
	// browser lets it use the RP ID, but it is no passkey origin.
	otherLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, otherPort, _ := net.SplitHostPort(otherLn.Addr().String())
	other := "http://localhost:" + otherPort
	app := harness.MustStart(t, harness.StoreSQLite, harness.Env(harness.FwQuick, map[string]string{
		"GATEHOUSE_BASE_URL":        "http://localhost:{port}",
		"GATEHOUSE_TRUSTED_ORIGINS": other,
		"GATEHOUSE_PASSKEY_ORIGINS": "http://localhost:{port}",
	}))
	otherSrv := &httptest.Server{Listener: otherLn, Config: &http.Server{Handler: app.App.Handler, ReadHeaderTimeout: time.Minute}}
	otherSrv.Start()
	t.Cleanup(otherSrv.Close)
	base := app.Cfg.HTTP.BaseURL
	ctx := newTabContext(t, chromium)
	if _, err := chromedp.Call(ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatalf("WebAuthn.enable: %v", err)
	}
	if _, err := chromedp.Call(ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: webauthn.Ctap2versionCtap21, Transport: webauthn.AuthenticatorTransportInternal,
		HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
	}}); err != nil {
		t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}
	// The bundle runs in every document of the tab: the test page is the
	// hosted sign-in page's origin with its CSP (no script, no fetch)
	// lifted, as a relying party's own page would have it.
	if _, err := chromedp.Call(ctx, page.SetBypassCSP, page.SetBypassCSPParams{Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: bundle}); err != nil {
		t.Fatal(err)
	}

	oidcBrowserNavigate(t, ctx, base+"/sign-in")
	oidcBrowserWaitPath(t, ctx, base, "/sign-in")
	must := func(js, want string) string {
		t.Helper()
		got := pkBrowserEval(t, ctx, js)
		if !strings.Contains(got, want) {
			t.Fatalf("%s = %s, want it to contain %s", js, got, want)
		}
		return got
	}
	must(`gh.client.signUp.email({name: "Pat", email: "pat@example.com", password: "`+harness.TfPassword+`"})`, `"email":"pat@example.com"`)
	must(`gh.client.passkey.addPasskey({name: "Laptop"})`, `"name":"Laptop"`)
	must(`gh.client.passkey.listUserPasskeys()`, `"deviceType":"singleDevice"`)
	must(`gh.client.signOut()`, `"success":true`)
	must(`gh.client.getSession()`, `"data":null`)

	must(`gh.signInCapturing()`, `"email":"pat@example.com"`)
	s := must(`gh.client.getSession()`, `"authMethods":["hwk","user","mfa"]`)
	if !strings.Contains(s, `"email":"pat@example.com"`) {
		t.Fatalf("get-session after the passkey sign-in = %s", s)
	}
	must(`gh.replay()`, `"status":400,"body":{"message":"Challenge not found","code":"CHALLENGE_NOT_FOUND"}`)
	must(`gh.client.signOut()`, `"success":true`)

	// A page on another origin of the RP ID: the browser makes the
	// assertion, Gatehouse refuses the origin in its client data.
	oidcBrowserNavigate(t, ctx, other+"/sign-in")
	oidcBrowserWaitPath(t, ctx, other, "/sign-in")
	must(`gh.client.signIn.passkey()`, `"code":"AUTHENTICATION_FAILED"`)
	must(`gh.client.getSession()`, `"data":null`)
	// The hosted sign-in page's passkey button, under the page's own CSP
	// (recorded, and required to hold no violation).
	if _, err := chromedp.Call(ctx, page.SetBypassCSP, page.SetBypassCSPParams{Enabled: false}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `document.addEventListener("securitypolicyviolation", e => {
		(window.__cspViolations = window.__cspViolations || []).push(e.effectiveDirective + " blocked " + (e.blockedURI || "(inline)"));
	});`}); err != nil {
		t.Fatal(err)
	}
	oidcBrowserNavigate(t, ctx, base+"/sign-in")
	oidcBrowserWaitPath(t, ctx, base, "/sign-in")
	oidcBrowserNoCSPViolations(t, ctx, "the sign-in page")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#passkey-sign-in`), chromedp.NodeVisible)); err != nil {
		t.Fatalf("press the passkey button: %v", err)
	}
	oidcBrowserWaitPath(t, ctx, base, "/account")
	if text := pageText(t, ctx, "main"); !strings.Contains(text, "pat@example.com") {
		t.Fatalf("the account page after the passkey button shows:\n%s", text)
	}
	oidcBrowserNavigate(t, ctx, base+"/api/auth/get-session")
	oidcBrowserWaitPath(t, ctx, base, "/api/auth/get-session")
	if body := pageText(t, ctx, "body"); !strings.Contains(body, `"authMethods":["hwk","user","mfa"]`) {
		t.Fatalf("get-session after the passkey button = %s", body)
	}
}
