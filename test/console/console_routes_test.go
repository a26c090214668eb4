package console

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// routeParam is a path parameter in a route as the server lists it.
var routeParam = regexp.MustCompile(`\{[^}]+\}`)

// Ensure every route of the admin console and of the account pages,
// whichever section registered it, is guarded, without a list to keep up
// to date: the routes are read from the server. For each page and form, on
// an id that names nothing:
//   - signed out: a page sends the browser to sign in and back to it; a
//     form to sign in and back to its area's home;
//   - a form posted from another origin is refused (403) before anything;
//   - the console: a signed-in user who is not an administrator is refused
//     with the 403 page, pages and forms alike; the administrator gets a
//     page (found or not, never a 5xx) and a form without a token is
//     refused;
//   - the account pages: any signed-in user gets a page (never a 403 or a
//     5xx), and a form without a token is refused;
//   - every answer carries the console's headers (no framing, no caching).
//
// A path that ends in "/" only redirects to the page without it.
func TestConsole_every_route_is_guarded(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		w := newConsoleWorld(t, app)
		anon := app.NewClient(t)
		evil := w.admin.Clone()
		evil.Origin = "https://evil.example"
		counts := map[string]int{}
		for _, r := range app.App.Server.Routes() {
			if !harness.ConsoleRoute(r.Path) || strings.Contains(r.Path, "/assets/") {
				continue
			}
			path := routeParam.ReplaceAllString(r.Path, "nothing-here")
			account := !strings.HasPrefix(path, "/console")
			area := "console"
			if account {
				area = "account"
			}
			counts[area+" "+r.Method]++
			switch r.Method {
			case http.MethodGet:
				if strings.HasSuffix(path, "/") {
					res := relativeLocation(t, anon.Get(path+"?a=b"))
					if res.Status != http.StatusMovedPermanently || res.Header.Get("Location") != strings.TrimSuffix(path, "/")+"?a=b" {
						t.Errorf("GET %s: %d to %q, want a redirect to the page without the slash", path, res.Status, res.Header.Get("Location"))
					}
					continue
				}
				harness.MustSignInRedirect(t, relativeLocation(t, anon.Get(path)), path)
				plain := w.plain.Get(path)
				admin := w.admin.Get(path)
				switch {
				case !account:
					if body := harness.MustConsolePage(t, plain, http.StatusForbidden); !strings.Contains(body, "Not an administrator") {
						t.Errorf("GET %s as a plain user: %s", path, body)
					}
				case plain.Status == http.StatusForbidden || plain.Status >= 500:
					t.Errorf("GET %s as a signed-in user: %d", path, plain.Status)
				default:
					harness.MustConsoleHeaders(t, plain)
				}
				if admin.Status >= 500 {
					t.Errorf("GET %s as the administrator: %d %s", path, admin.Status, admin.Body)
				}
				harness.MustConsoleHeaders(t, admin)
			case http.MethodPost:
				home := "/console"
				if account {
					home = "/account"
				}
				harness.MustSignInRedirect(t, relativeLocation(t, consolePost(anon, path, nil)), home)
				if body := harness.MustConsolePage(t, consolePost(evil, path, url.Values{"_token": {"x"}}), http.StatusForbidden); !strings.Contains(body, "another site") {
					t.Errorf("POST %s from another origin: %s", path, body)
				}
				if !account {
					if body := harness.MustConsolePage(t, consolePost(w.plain, path, nil), http.StatusForbidden); !strings.Contains(body, "Not an administrator") {
						t.Errorf("POST %s as a plain user: %s", path, body)
					}
				}
				for _, c := range []*harness.Client{w.admin, w.plain} {
					if account || c == w.admin {
						if body := harness.MustConsolePage(t, consolePost(c, path, nil), http.StatusForbidden); !strings.Contains(body, "Form refused") {
							t.Errorf("POST %s without a token: %s", path, body)
						}
					}
				}
			default:
				t.Errorf("%s %s: the console and account pages answer GET and POST only", r.Method, r.Path)
			}
		}
		if counts["console GET"] < 3 || counts["console POST"] < 9 {
			t.Fatalf("the server lists too few console routes: %v", counts)
		}
		t.Logf("routes checked: %v", counts)
	})
}

// relativeLocation returns r with its Location header made relative when
// it names this origin's base URL: the hosted pages redirect absolutely.
func relativeLocation(t *testing.T, r *harness.Response) *harness.Response {
	t.Helper()
	loc, err := url.Parse(r.Header.Get("Location"))
	if err != nil || !loc.IsAbs() {
		return r
	}
	loc.Scheme, loc.Host = "", ""
	r.Header.Set("Location", loc.String())
	return r
}
