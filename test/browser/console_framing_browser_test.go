package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure a real browser refuses to show the console and the account pages
// framed by another site, even to a signed-in administrator: a page on
// another origin frames /console/users and /account, and Chromium shows
// neither (each frame is left on Chromium's error page, its document never
// loaded). The same page frames a page of its own origin, which loads, so
// the test would see a frame that is allowed.
func TestConsole_browser_refuses_framing(t *testing.T) {
	forBrowserStores(t, harness.StoresOnce, "console-framing", func(t *testing.T, s harness.Store, chromium, dir string) {
		app := harness.MustStart(t, s, harness.AdminEnv)
		harness.MustVerifiedUser(t, app, "Root Admin", harness.AdminEmail, harness.StrictPassword)
		tb := newTab(t, chromium, dir)
		oidcBrowserNavigate(t, tb.ctx, app.URL+"/console/users")
		oidcBrowserSignIn(t, tb.ctx, app, harness.AdminEmail)
		oidcBrowserWaitPath(t, tb.ctx, app.URL, "/console/users")

		framed := []string{app.URL + "/console/users", app.URL + "/account"}
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			if r.URL.Path == "/own" {
				fmt.Fprint(w, `<!doctype html><title>own</title><p>own page</p>`)
				return
			}
			var b strings.Builder
			b.WriteString(`<!doctype html><title>framing</title>`)
			for _, u := range append([]string{"/own"}, framed...) {
				fmt.Fprintf(&b, `<iframe src="%s" title="framed"></iframe>`, u)
			}
			fmt.Fprint(w, b.String())
		}))
		t.Cleanup(evil.Close)
		if _, err := chromedp.Run(tb.ctx, chromedp.Navigate(evil.URL)); err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{evil.URL + "/own": true}
		for _, u := range framed {
			want[u] = false
		}
		deadline := time.Now().Add(oidcBrowserStepTimeout)
		for {
			got := framesOf(t, tb)
			if len(got) == len(want) || time.Now().After(deadline) {
				for u, loads := range want {
					loaded, seen := got[u]
					switch {
					case !seen:
						t.Errorf("no frame for %s (frames: %v)", u, got)
					case loaded != loads:
						t.Errorf("the frame of %s loaded = %v, want %v", u, loaded, loads)
					}
				}
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		tb.shot("01-framed")
	})
}

// framesOf returns the tab's child frames by the URL they were asked to
// load, and whether each loaded it (false: Chromium's error page).
func framesOf(t *testing.T, tb *tab) map[string]bool {
	t.Helper()
	res, err := chromedp.Call(tb.ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		t.Fatalf("frame tree: %v", err)
	}
	out := map[string]bool{}
	if res.FrameTree == nil {
		return out
	}
	for _, f := range res.FrameTree.ChildFrames {
		switch {
		case f.Frame.UnreachableURL != "":
			out[f.Frame.UnreachableURL] = false
		case strings.HasPrefix(f.Frame.URL, "chrome-error:"):
			out[f.Frame.URL] = false
		default:
			out[f.Frame.URL] = true
		}
	}
	return out
}
