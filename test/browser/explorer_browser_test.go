package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/gatehouse/gatehouse/test/harness"
)

// Generous bounds for a slow machine; they only turn a hang into a failure,
// and nothing in the test depends on how fast the page is.
const (
	browserDeadline = 2 * time.Minute  // one test's tab
	renderTimeout   = 30 * time.Second // one contract to load and render
)

// explorerContract is one entry of the explorer's contract selector, with the
// operations the test knows it must (and must not) show. More operations will
// join the contracts; only these are pinned.
type explorerContract struct {
	name    string   // the option text in Swagger UI's top bar
	url     string   // the document the option loads
	present []string // paths the rendered contract must show
	absent  []string // paths it must not show
}

// explorerContracts lists the selector's options in their order. The first
// is the one the page opens on ("urls.primaryName").
var explorerContracts = []explorerContract{
	{
		name:    "Auth and admin",
		url:     "/api/auth-openapi.json",
		present: []string{"/api/auth/ok", "/api/health/ready"},
	},
	{
		name:    "Authentication framework",
		url:     "/api/auth/open-api/generate-schema",
		present: []string{"/api/auth/ok"},
		absent:  []string{"/api/health/ready"},
	},
	{
		name:    "Trusted backend",
		url:     "/api/backend-openapi.json",
		present: []string{"/api/health/ready"},
		absent:  []string{"/api/auth/ok"},
	},
}

// Ensure the API explorer works in a real browser under its strict CSP:
// Swagger UI loads under a Gatehouse header (no Swagger branding), its
// top-bar selector offers exactly the three contracts,
// selecting each one renders that contract's operations (the known ones
// present, the other contracts' ones absent, nothing more and nothing less
// than the document lists), the trusted contract's Authorize dialog offers
// only its service-key schemes, and the page raises no exception, logs no error,
// violates no CSP directive and has no request fail.
func TestExplorer_lists_the_three_contracts(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	chromium := chromiumPath(t)
	app := harness.MustStart(t, harness.StoreMemory, nil)

	// What each contract's document says, read over plain HTTP: its title
	// tells which contract the explorer is showing, and its paths are what
	// the explorer must render for it.
	docs := make(map[string]openAPIDoc, len(explorerContracts))
	for _, c := range explorerContracts {
		doc := fetchOpenAPI(t, app, c.url)
		for _, p := range c.present {
			if !slices.Contains(doc.paths, p) {
				t.Fatalf("%s: document %s lacks %s; paths = %v", c.name, c.url, p, doc.paths)
			}
		}
		docs[c.url] = doc
	}

	ctx := newTabContext(t, chromium)
	report := watchPage(t, ctx)

	if err := chromedp.Do(ctx, chromedp.Navigate(app.URL+"/api/docs")); err != nil {
		t.Fatalf("open /api/docs: %v", err)
	}

	// The page opens on the primary contract.
	first := explorerContracts[0]
	shown := waitForContract(t, ctx, first, docs[first.url])
	checkOperations(t, first, docs[first.url], shown)

	// The selector offers the three contracts, in order, each with its document.
	options, err := chromedp.Run(ctx, chromedp.Evaluate[[]selectOption](
		`Array.from(document.querySelectorAll('.topbar select option'), o => ({name: o.textContent.trim(), url: o.value}))`))
	if err != nil {
		t.Fatalf("read the contract selector: %v", err)
	}
	want := make([]selectOption, len(explorerContracts))
	for i, c := range explorerContracts {
		want[i] = selectOption{Name: c.name, URL: c.url}
	}
	if !slices.Equal(options, want) {
		t.Fatalf("selector options = %+v, want %+v", options, want)
	}
	checkBranding(t, ctx)

	// Select every contract in turn, the primary one last, so that each
	// selection is a real switch away from what is on screen. While the
	// trusted one is on screen, its Authorize dialog is checked too (each
	// rendering of a contract is the test's main cost).
	trusted := explorerContracts[2]
	for i := range explorerContracts {
		c := explorerContracts[(i+1)%len(explorerContracts)]
		selectContract(t, ctx, c)
		shown := waitForContract(t, ctx, c, docs[c.url])
		// Swagger UI's own switch handler ran: it deep-links the choice.
		if shown.PrimaryName != c.name {
			t.Fatalf("%s: after selecting it the page URL names %q", c.name, shown.PrimaryName)
		}
		checkOperations(t, c, docs[c.url], shown)
		if c.url == trusted.url {
			checkTrustedSchemes(t, ctx)
		}
	}

	saveScreenshot(t, ctx)
	report()
}

// branding is what the explorer shows of whose it is.
type branding struct {
	TopBar   string   `json:"topBar"`   // the top bar's visible text
	Markup   string   `json:"markup"`   // the top bar's HTML
	Graphics int      `json:"graphics"` // images and SVGs in the top bar
	Icons    []string `json:"icons"`    // the page's icon links
	Text     string   `json:"text"`     // the whole page's visible text
	Title    string   `json:"title"`
}

// checkBranding fails unless the explorer's top bar names Gatehouse beside
// the contract selector and nothing on the page shows Swagger's or
// SmartBear's branding (their logo, name or icon).
func checkBranding(t *testing.T, ctx context.Context) {
	t.Helper()
	b, err := chromedp.Run(ctx, chromedp.Evaluate[branding](`(() => {
		const bar = document.querySelector(".topbar");
		return {
			topBar: bar ? bar.innerText : "",
			markup: bar ? bar.outerHTML : "",
			graphics: bar ? bar.querySelectorAll("svg, img, picture, canvas").length : -1,
			icons: Array.from(document.querySelectorAll('link[rel~="icon"]'), l => l.href),
			text: document.body.innerText,
			title: document.title,
		};
	})()`))
	if err != nil {
		t.Fatalf("read the explorer's branding: %v", err)
	}
	if !strings.Contains(b.TopBar, "Gatehouse") || !strings.Contains(b.Title, "Gatehouse") {
		t.Errorf("the explorer's top bar says %q and its title %q: neither names Gatehouse", b.TopBar, b.Title)
	}
	if !strings.Contains(b.Markup, "<select") {
		t.Errorf("the explorer's top bar lost the contract selector: %s", b.Markup)
	}
	if b.Graphics != 0 {
		t.Errorf("the explorer's top bar shows %d graphics (Swagger's logo?)", b.Graphics)
	}
	for what, v := range map[string]string{"top bar": b.Markup, "page text": b.Text, "title": b.Title, "icons": strings.Join(b.Icons, " ")} {
		l := strings.ToLower(v)
		for _, brand := range []string{"swagger", "smartbear"} {
			if i := strings.Index(l, brand); i >= 0 {
				t.Errorf("the explorer's %s shows Swagger branding: …%s…", what, v[max(0, i-80):min(len(v), i+80)])
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// authorizeSchemes opens the Authorize dialog of the contract on screen,
// returns the names of the security schemes it offers and closes it.
func authorizeSchemes(t *testing.T, ctx context.Context) []string {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".auth-wrapper .authorize"))); err != nil {
		t.Fatalf("open the Authorize dialog: %v", err)
	}
	names, err := chromedp.Run(ctx, chromedp.Poll[[]string](`(() => {
		const blocks = document.querySelectorAll(".modal-ux .auth-container");
		if (blocks.length === 0) return null;
		return Array.from(blocks, b => {
			const name = b.querySelector("h4 code") || b.querySelector("h4");
			return name ? name.textContent.trim() : "";
		});
	})()`, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(renderTimeout)))
	if err != nil {
		t.Fatalf("the Authorize dialog never showed its schemes: %v", err)
	}
	// The dialog's close button, pressed from script: a synthetic click at
	// its coordinates can land on the dialog's backdrop layers instead.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector(".modal-ux .close-modal").click() === undefined`)); err != nil {
		t.Fatalf("close the Authorize dialog: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector(".modal-ux") === null || null`,
		chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(renderTimeout))); err != nil {
		t.Fatalf("the Authorize dialog did not close: %v", err)
	}
	slices.Sort(names)
	return names
}

// checkTrustedSchemes checks that the trusted contract's Authorize dialog
// offers the service-key schemes, and nothing the trusted operations never
// take.
func checkTrustedSchemes(t *testing.T, ctx context.Context) {
	t.Helper()
	schemes := authorizeSchemes(t, ctx)
	for _, want := range []string{"serviceKeyBearer", "serviceKeyHeader"} {
		if !slices.Contains(schemes, want) {
			t.Errorf("the trusted contract's Authorize dialog lacks %s; it offers %v", want, schemes)
		}
	}
	if slices.Contains(schemes, "oauthAccessToken") || len(schemes) != 2 {
		t.Errorf("the trusted contract's Authorize dialog offers %v, want exactly the two service-key schemes", schemes)
	}
}

// selectOption is an <option> of the contract selector.
type selectOption struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// openAPIDoc is what the test reads from a contract's document.
type openAPIDoc struct {
	title string
	paths []string // sorted; the webhooks' names too (Swagger UI lists them as operations)
}

// fetchOpenAPI reads the OpenAPI document at path.
func fetchOpenAPI(t *testing.T, app *harness.App, path string) openAPIDoc {
	t.Helper()
	r := app.Do(t, http.MethodGet, path, "")
	harness.MustStatus(t, r, http.StatusOK)
	var body struct {
		Info     struct{ Title string }
		Paths    map[string]json.RawMessage
		Webhooks map[string]json.RawMessage
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("%s is not an OpenAPI document: %v", path, err)
	}
	if body.Info.Title == "" {
		t.Fatalf("%s has no info.title", path)
	}
	doc := openAPIDoc{title: body.Info.Title}
	for p := range body.Paths {
		doc.paths = append(doc.paths, p)
	}
	for w := range body.Webhooks {
		doc.paths = append(doc.paths, w)
	}
	slices.Sort(doc.paths)
	return doc
}

// watchPage records, from now on, everything on the tab that signals a broken
// page: uncaught exceptions, console.error and console.assert calls, browser
// log entries at level error (Chromium reports Content-Security-Policy
// violations there), failed requests and responses with an error status. It
// also installs, before any page script runs, a securitypolicyviolation
// listener that records each CSP violation with its directive and resource;
// it alone sees a violation that page code catches, such as a refused eval.
// The returned func fails the test if any of these happened. Should the test
// fail before calling it, what was recorded is logged, since a blocked script
// is the likeliest reason for a page that never renders.
func watchPage(t *testing.T, ctx context.Context) (report func()) {
	t.Helper()
	var (
		mu       sync.Mutex
		problems []string
		urls     = map[network.RequestID]string{}
		reported bool
	)
	add := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			text := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				text += " " + d.Exception.Description
			}
			add("uncaught exception at %s:%d:%d: %s", d.URL, d.LineNumber+1, d.ColumnNumber+1, text)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range ev.Args {
					if len(a.Value) > 0 {
						args = append(args, string(a.Value))
					} else {
						args = append(args, a.Description)
					}
				}
				add("console.%s: %s", ev.Type, strings.Join(args, " "))
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				add("browser log (%s) %s: %s", ev.Entry.Source, ev.Entry.URL, ev.Entry.Text)
			}
		case *network.EventRequestWillBeSent:
			mu.Lock()
			urls[ev.RequestID] = ev.Request.URL
			mu.Unlock()
		case *network.EventLoadingFailed:
			mu.Lock()
			url := urls[ev.RequestID]
			mu.Unlock()
			add("request %s failed: %s (blocked: %q, canceled: %t)", url, ev.ErrorText, ev.BlockedReason, ev.Canceled)
		case *network.EventResponseReceived:
			if ev.Response.Status >= 400 {
				add("request %s answered %d", ev.Response.URL, ev.Response.Status)
			}
		}
	})
	if err != nil {
		t.Fatalf("listen to the tab: %v", err)
	}
	const recordCSP = `document.addEventListener("securitypolicyviolation", e => {
		(window.__cspViolations = window.__cspViolations || []).push(
			e.effectiveDirective + " blocked " + (e.blockedURI || "(inline)") +
			" from " + (e.sourceFile || e.documentURI) + ":" + e.lineNumber + ":" + e.columnNumber +
			(e.sample ? " sample " + JSON.stringify(e.sample) : ""));
	});`
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: recordCSP}); err != nil {
		t.Fatalf("install the CSP violation recorder: %v", err)
	}

	// all returns every problem recorded so far.
	all := func() []string {
		csp, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__cspViolations || []`))
		mu.Lock()
		defer mu.Unlock()
		out := slices.Clone(problems)
		if err != nil {
			out = append(out, fmt.Sprintf("CSP violations cannot be read: %v", err))
		}
		for _, v := range csp {
			out = append(out, "CSP violation: "+v)
		}
		return out
	}
	t.Cleanup(func() {
		if t.Failed() && !reported {
			if p := all(); len(p) > 0 {
				t.Logf("the explorer page had %d problem(s) by then:\n  %s", len(p), strings.Join(p, "\n  "))
			}
		}
	})
	return func() {
		t.Helper()
		reported = true
		if p := all(); len(p) > 0 {
			t.Fatalf("the explorer page had %d problem(s):\n  %s", len(p), strings.Join(p, "\n  "))
		}
	}
}

// selectContract picks c in Swagger UI's top-bar selector as a user would:
// the select takes the new value and fires a bubbling change event, which
// React (Swagger UI's renderer) handles at its root. The value goes through
// the native setter so that React's value tracking sees the change.
func selectContract(t *testing.T, ctx context.Context, c explorerContract) {
	t.Helper()
	const choose = `(url => {
		const sel = document.querySelector(".topbar select");
		if (!sel) return "no selector";
		if (sel.disabled) return "selector disabled";
		if (!Array.from(sel.options).some(o => o.value === url)) return "no option for " + url;
		Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, "value").set.call(sel, url);
		sel.dispatchEvent(new Event("change", {bubbles: true}));
		return "";
	})(%s)`
	msg, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(choose, jsString(c.url))))
	if err != nil {
		t.Fatalf("select %q: %v", c.name, err)
	}
	if msg != "" {
		t.Fatalf("select %q: %s", c.name, msg)
	}
}

// explorerState is what the explorer shows: the selected contract, the title
// of the rendered document, the selected contract in the page URL (deep
// linking), and the rendered operations.
type explorerState struct {
	Selected    string   `json:"selected"`
	Disabled    bool     `json:"disabled"`
	Title       string   `json:"title"`
	PrimaryName string   `json:"primaryName"`
	Paths       []string `json:"paths"` // data-path of each operation
	Texts       []string `json:"texts"` // visible path of each operation
}

// readExplorerState reads explorerState from the page.
const readExplorerState = `(() => {
	const sel = document.querySelector(".topbar select");
	const title = document.querySelector(".information-container .info .title");
	const ops = Array.from(document.querySelectorAll(".opblock .opblock-summary-path"));
	return {
		selected: sel ? sel.value : "",
		disabled: sel ? sel.disabled : true,
		title: title && title.firstChild ? title.firstChild.textContent.trim() : "",
		primaryName: new URLSearchParams(location.search).get("urls.primaryName") || "",
		paths: ops.map(e => e.getAttribute("data-path") || ""),
		texts: ops.map(e => e.textContent.replace(/\u200b/g, "").trim()),
	};
})()`

// waitForContract waits until the explorer shows c: selected, loaded (the
// selector is enabled again), its document's title rendered and operations
// rendered. It returns what is shown then. After renderTimeout it fails with
// the state shown at that point.
func waitForContract(t *testing.T, ctx context.Context, c explorerContract, doc openAPIDoc) explorerState {
	t.Helper()
	ready := fmt.Sprintf(`(() => {
		const s = %s;
		return s.selected === %s && !s.disabled && s.title === %s && s.paths.length > 0 ? s : null;
	})()`, readExplorerState, jsString(c.url), jsString(doc.title))
	state, err := chromedp.Run(ctx, chromedp.Poll[explorerState](ready,
		chromedp.WithPollingInterval(50*time.Millisecond),
		chromedp.WithPollingTimeout(renderTimeout)))
	if err != nil {
		last, lastErr := chromedp.Run(ctx, chromedp.Evaluate[explorerState](readExplorerState))
		if lastErr != nil {
			t.Fatalf("%s: the explorer never showed %q (%v), and its state cannot be read: %v", c.name, doc.title, err, lastErr)
		}
		t.Fatalf("%s: the explorer never showed %q (%v); last state: %+v", c.name, doc.title, err, last)
	}
	return state
}

// checkOperations checks that the explorer, showing c, renders exactly the
// operations of c's document: the pinned ones present, the excluded ones
// absent, each path visible as text.
func checkOperations(t *testing.T, c explorerContract, doc openAPIDoc, s explorerState) {
	t.Helper()
	if !slices.Equal(s.Texts, s.Paths) {
		t.Errorf("%s: visible paths %q differ from their data-path %q", c.name, s.Texts, s.Paths)
	}
	for _, p := range c.present {
		if !slices.Contains(s.Paths, p) {
			t.Errorf("%s: %s is not shown; shown: %v", c.name, p, s.Paths)
		}
	}
	for _, p := range c.absent {
		if slices.Contains(s.Paths, p) {
			t.Errorf("%s: %s is shown but belongs to another contract; shown: %v", c.name, p, s.Paths)
		}
	}
	// Every path of the document, and no other, is shown (a path with
	// several methods is shown once per method).
	shown := slices.Compact(slices.Sorted(slices.Values(s.Paths)))
	if !slices.Equal(shown, doc.paths) {
		t.Errorf("%s: shown paths %v, document paths %v", c.name, shown, doc.paths)
	}
	if t.Failed() {
		t.FailNow()
	}
}

// saveScreenshot keeps a picture of the page in the test's temporary
// directory, for a look while debugging (with -v, which logs its path); it is
// removed with the directory when the test ends.
func saveScreenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("screenshot: %v", err)
		return
	}
	path := filepath.Join(t.TempDir(), "explorer.png")
	if err := os.WriteFile(path, png, 0o600); err != nil {
		t.Logf("screenshot: %v", err)
		return
	}
	t.Logf("screenshot: %s", path)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a string always marshals
	}
	return string(b)
}
