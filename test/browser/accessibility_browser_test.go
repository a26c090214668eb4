package browser

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/gatehouse/gatehouse/test/harness"
)

// axeSource is axe-core's browser build, from test/clients' pinned
// package (npm ci installs it), read once per test process.
var axeSource = sync.OnceValues(func() (string, error) {
	b, err := os.ReadFile(filepath.Join(harness.ClientsDir, "node_modules", "axe-core", "axe.min.js"))
	return string(b), err
})

// axeRun runs axe-core on the tab's document and returns its serious and
// critical violations, one line each: the rule, its impact, its help text
// and the first few elements it names. axe is evaluated through the
// DevTools protocol, which the page's CSP does not govern, so the page
// needs no exception for it; it is installed once per document.
const axeRun = `(async () => {
  const r = await axe.run(document, { resultTypes: ["violations"] });
  return r.violations
    .filter(v => v.impact === "serious" || v.impact === "critical")
    .map(v => v.id + " (" + v.impact + "): " + v.help + " at " +
      v.nodes.slice(0, 3).map(n => n.target.join(" ") + (n.failureSummary ? " [" + n.failureSummary.replace(/\s+/g, " ") + "]" : "")).join("; "));
})()`

// mustAccessible fails unless axe-core finds no serious or critical
// accessibility violation on the tab's page (WCAG 2.x A and AA rules and
// axe's best practices, as axe-core rates them).
func mustAccessible(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	harness.MustNpmCI(t, harness.MustTool(t, "npm"))
	src, err := axeSource()
	if err != nil {
		t.Fatalf("read axe-core: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof window.axe === "object" || (() => { `+src+`; return true })()`)); err != nil {
		t.Fatalf("install axe-core on %s: %v", what, err)
	}
	found, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](axeRun, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("run axe-core on %s: %v", what, err)
	}
	if len(found) > 0 {
		href, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
		t.Fatalf("%s (%s) has %d serious or critical accessibility violations:\n  %s", what, href, len(found), strings.Join(found, "\n  "))
	}
}
