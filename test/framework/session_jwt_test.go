package framework

import (
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// mustRevoked fails unless c, which had a session, now has none: get-session
// answers null without a token, and /api/auth/token 401.
func mustRevoked(t testing.TB, c *harness.Client) {
	t.Helper()
	r := c.Get("/api/auth/get-session")
	harness.MustNull(t, r)
	if r.Header.Get("set-auth-jwt") != "" {
		t.Fatal("a revoked session got a set-auth-jwt")
	}
	harness.MustCode(t, c.Get("/api/auth/token"), http.StatusUnauthorized, "UNAUTHORIZED")
}

// sameClaims fails unless a and b are the same claims but iat and exp.
func sameClaims(t testing.TB, a, b map[string]any) {
	t.Helper()
	a, b = maps.Clone(a), maps.Clone(b)
	for _, m := range []map[string]any{a, b} {
		delete(m, "iat")
		delete(m, "exp")
	}
	if got, want := harness.MustJSON(t, a), harness.MustJSON(t, b); got != want {
		t.Fatalf("claims %s, want %s", got, want)
	}
}

// Ensure get-session hands out its set-auth-jwt again while the session and
// user are unchanged: a call a second later gets the very same token (a new
// one would carry a later iat), which verifies against the key set and says
// exactly what a freshly signed /api/auth/token says but for iat and exp.
func TestGetSession_jwt_is_reused_while_unchanged(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		c := app.NewClient(t)
		harness.MustSignUp(t, c, "Ada", harness.Email(t, "ada@example.com"), "correct horse battery staple")
		first, claims := harness.SessionJWT(t, c)
		// Move the app's clock past the first token's iat, so that a
		// token signed now would differ from it.
		app.Clock.Advance(time.Second)
		if app.Clock.Now().Unix() <= int64(claims["iat"].(float64)) {
			t.Fatalf("the clock %v has not passed iat %v", app.Clock.Now(), claims["iat"])
		}
		again, againClaims := harness.SessionJWT(t, c)
		if again != first {
			t.Fatalf("get-session signed a new token for an unchanged session (iat %v, then %v)", claims["iat"], againClaims["iat"])
		}
		fresh, _ := harness.MustOK(t, c.Get("/api/auth/token"))["token"].(string)
		_, freshClaims := harness.MustVerifyJWT(t, c, fresh)
		if freshClaims["iat"] == againClaims["iat"] {
			t.Fatalf("/api/auth/token reused a token: iat %v", freshClaims["iat"])
		}
		sameClaims(t, againClaims, freshClaims)
	})
}

// Ensure nothing stale leaves get-session: after a rename the very next
// token says the new name; after sign-out the old cookie gets no session and
// no token.
func TestGetSession_jwt_follows_changes_and_sign_out(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		c := app.NewClient(t)
		harness.MustSignUp(t, c, "Ada", harness.Email(t, "ada@example.com"), "correct horse battery staple")
		harness.SessionJWT(t, c)
		harness.MustOK(t, c.Post("/api/auth/update-user", `{"name":"Ada Lovelace"}`))
		if _, claims := harness.SessionJWT(t, c); claims["name"] != "Ada Lovelace" {
			t.Fatalf("after a rename set-auth-jwt says name %v", claims["name"])
		}
		replay := c.Clone()
		harness.MustOK(t, c.Post("/api/auth/sign-out", ""))
		mustRevoked(t, replay)
	})
}

// Ensure a ban is seen at once: the banned user's next get-session, which
// had a token to reuse, has no session and no token.
func TestGetSession_jwt_stops_at_a_ban(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		bob, bobID := harness.MustPlainUser(t, app, "Bob", harness.Email(t, "bob@example.com"), harness.UserPassword)
		harness.SessionJWT(t, bob)
		harness.MustOK(t, admin.Post(harness.AdminPath("ban-user"), harness.MustJSON(t, map[string]any{"userId": bobID})))
		mustRevoked(t, bob)
	})
}

// Ensure two instances on one database (replicas) agree within the session
// cache's lifetime: a rename, a sign-out and a ban made through the first
// are seen by the second within a second, although it had checked the
// session (and had a token to reuse) just before. The first, through which
// they were made, sees each at once.
// It keeps a fresh application: it starts two instances on a database of their own.
func TestGetSession_another_instance_sees_changes_within_a_second(t *testing.T) {
	t.Parallel()
	for _, s := range harness.SQLOnly(harness.StoresThatMatter) {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			a := harness.MustStart(t, s, harness.AdminEnv)
			b := harness.MustStart(t, s, harness.Env(harness.AdminEnv, map[string]string{"GATEHOUSE_DATABASE_URL": a.DatabaseURL}))
			// onB is the browser of c, talking to b instead.
			onB := func(c *harness.Client) *harness.Client {
				d := b.NewClient(t)
				d.Cookies = maps.Clone(c.Cookies)
				return d
			}
			revoked := func(c *harness.Client) func() bool {
				return func() bool {
					r := c.Get("/api/auth/get-session")
					return r.Status == http.StatusOK && strings.TrimSpace(string(r.Body)) == "null"
				}
			}

			ada := a.NewClient(t)
			harness.MustSignUp(t, ada, "Ada", "ada@example.com", "correct horse battery staple")
			adaB := onB(ada)
			first, _ := harness.SessionJWT(t, adaB)
			if _, claims := harness.MustVerifyJWT(t, adaB, first); claims["name"] != "Ada" {
				t.Fatalf("claims = %v", claims)
			}
			harness.SessionJWT(t, ada)
			harness.MustOK(t, ada.Post("/api/auth/update-user", `{"name":"Ada Lovelace"}`))
			if _, claims := harness.SessionJWT(t, ada); claims["name"] != "Ada Lovelace" {
				t.Fatalf("the instance that renamed her says name %v on the next request", claims["name"])
			}
			// The other instance's session cache expires on the wall
			// clock, not on the app's (harness.ReplicaLag): these waits
			// are real.
			harness.Eventually(t, harness.ReplicaLag, "the rename on the other instance", func() bool {
				_, claims := harness.SessionJWT(t, adaB)
				return claims["name"] == "Ada Lovelace"
			})
			harness.SessionJWT(t, adaB)
			harness.MustOK(t, ada.Post("/api/auth/sign-out", ""))
			harness.Eventually(t, harness.ReplicaLag, "the sign-out on the other instance", revoked(adaB))
			mustRevoked(t, adaB)

			admin, _ := harness.MustAdmin(t, a)
			bob, bobID := harness.MustPlainUser(t, a, "Bob", "bob@example.com", harness.UserPassword)
			bobB := onB(bob)
			harness.SessionJWT(t, bobB)
			harness.SessionJWT(t, bob)
			harness.MustOK(t, admin.Post(harness.AdminPath("ban-user"), harness.MustJSON(t, map[string]any{"userId": bobID})))
			mustRevoked(t, bob)
			harness.Eventually(t, harness.ReplicaLag, "the ban on the other instance", revoked(bobB))
			mustRevoked(t, bobB)
		})
	}
}
