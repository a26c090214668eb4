package test

import (
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sessionJWT calls get-session through c and returns its set-auth-jwt,
// verified against the key set, and its claims; it fails when signed out.
func sessionJWT(t testing.TB, c *fwClient) (string, map[string]any) {
	t.Helper()
	r := c.get("/api/auth/get-session")
	mustStatus(t, r, http.StatusOK)
	token := r.Header.Get("set-auth-jwt")
	if token == "" {
		t.Fatalf("get-session sent no set-auth-jwt: %s", r.Body)
	}
	_, claims := mustVerifyJWT(t, c, token)
	if user := mustUser(t, r.JSON(t)); claims["name"] != user["name"] || claims["sub"] != user["id"] {
		t.Fatalf("set-auth-jwt says %v, get-session's user %v", claims, user)
	}
	return token, claims
}

// mustRevoked fails unless c, which had a session, now has none: get-session
// answers null without a token, and /api/auth/token 401.
func mustRevoked(t testing.TB, c *fwClient) {
	t.Helper()
	r := c.get("/api/auth/get-session")
	mustNull(t, r)
	if r.Header.Get("set-auth-jwt") != "" {
		t.Fatal("a revoked session got a set-auth-jwt")
	}
	mustCode(t, c.get("/api/auth/token"), http.StatusUnauthorized, "UNAUTHORIZED")
}

// sameClaims fails unless a and b are the same claims but iat and exp.
func sameClaims(t testing.TB, a, b map[string]any) {
	t.Helper()
	a, b = maps.Clone(a), maps.Clone(b)
	for _, m := range []map[string]any{a, b} {
		delete(m, "iat")
		delete(m, "exp")
	}
	if got, want := mustJSON(t, a), mustJSON(t, b); got != want {
		t.Fatalf("claims %s, want %s", got, want)
	}
}

// Ensure get-session hands out its set-auth-jwt again while the session and
// user are unchanged: a call a second later gets the very same token (a new
// one would carry a later iat), which verifies against the key set and says
// exactly what a freshly signed /api/auth/token says but for iat and exp.
func TestGetSession_jwt_is_reused_while_unchanged(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		c := app.client(t)
		mustSignUp(t, c, "Ada", "ada@example.com", "correct horse battery staple")
		first, claims := sessionJWT(t, c)
		// Let the clock pass the first token's iat, so that a token signed
		// now would differ from it.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Unix() <= int64(claims["iat"].(float64)) && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
		}
		again, againClaims := sessionJWT(t, c)
		if again != first {
			t.Fatalf("get-session signed a new token for an unchanged session (iat %v, then %v)", claims["iat"], againClaims["iat"])
		}
		fresh, _ := mustOK(t, c.get("/api/auth/token"))["token"].(string)
		_, freshClaims := mustVerifyJWT(t, c, fresh)
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
	fwForStores(t, storesOnce, fwQuick, func(t *testing.T, app *fwApp) {
		c := app.client(t)
		mustSignUp(t, c, "Ada", "ada@example.com", "correct horse battery staple")
		sessionJWT(t, c)
		mustOK(t, c.post("/api/auth/update-user", `{"name":"Ada Lovelace"}`))
		if _, claims := sessionJWT(t, c); claims["name"] != "Ada Lovelace" {
			t.Fatalf("after a rename set-auth-jwt says name %v", claims["name"])
		}
		replay := c.clone()
		mustOK(t, c.post("/api/auth/sign-out", ""))
		mustRevoked(t, replay)
	})
}

// Ensure a ban is seen at once: the banned user's next get-session, which
// had a token to reuse, has no session and no token.
func TestGetSession_jwt_stops_at_a_ban(t *testing.T) {
	t.Parallel()
	adminForStores(t, func(t *testing.T, app *fwApp) {
		admin, _ := mustAdmin(t, app)
		bob, bobID := mustPlainUser(t, app, "Bob", "bob@example.com", userPassword)
		sessionJWT(t, bob)
		mustOK(t, admin.post(adminPath("ban-user"), mustJSON(t, map[string]any{"userId": bobID})))
		mustRevoked(t, bob)
	})
}

// replicaLag bounds how long a change made through one instance may take
// to reach another: the session cache's lifetime (GATEHOUSE_SESSION_CACHE_TTL,
// 500ms by default, at most 1s).
const replicaLag = time.Second

// eventually polls ok until it holds, and fails the test if it still does
// not once within has passed since the call.
func eventually(t testing.TB, within time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen within %v", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Ensure two instances on one database (replicas) agree within the session
// cache's lifetime: a rename, a sign-out and a ban made through the first
// are seen by the second within a second, although it had checked the
// session (and had a token to reuse) just before. The first, through which
// they were made, sees each at once.
func TestGetSession_another_instance_sees_changes_within_a_second(t *testing.T) {
	t.Parallel()
	for _, s := range sqlOnly(storesThatMatter) {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			a := mustStartFramework(t, s, adminEnv)
			b := mustStartFramework(t, s, fwEnv(adminEnv, map[string]string{"GATEHOUSE_DATABASE_URL": a.DatabaseURL}))
			// onB is the browser of c, talking to b instead.
			onB := func(c *fwClient) *fwClient {
				d := b.client(t)
				d.Cookies = maps.Clone(c.Cookies)
				return d
			}
			revoked := func(c *fwClient) func() bool {
				return func() bool {
					r := c.get("/api/auth/get-session")
					return r.Status == http.StatusOK && strings.TrimSpace(string(r.Body)) == "null"
				}
			}

			ada := a.client(t)
			mustSignUp(t, ada, "Ada", "ada@example.com", "correct horse battery staple")
			adaB := onB(ada)
			first, _ := sessionJWT(t, adaB)
			if _, claims := mustVerifyJWT(t, adaB, first); claims["name"] != "Ada" {
				t.Fatalf("claims = %v", claims)
			}
			sessionJWT(t, ada)
			mustOK(t, ada.post("/api/auth/update-user", `{"name":"Ada Lovelace"}`))
			if _, claims := sessionJWT(t, ada); claims["name"] != "Ada Lovelace" {
				t.Fatalf("the instance that renamed her says name %v on the next request", claims["name"])
			}
			eventually(t, replicaLag, "the rename on the other instance", func() bool {
				_, claims := sessionJWT(t, adaB)
				return claims["name"] == "Ada Lovelace"
			})
			sessionJWT(t, adaB)
			mustOK(t, ada.post("/api/auth/sign-out", ""))
			eventually(t, replicaLag, "the sign-out on the other instance", revoked(adaB))
			mustRevoked(t, adaB)

			admin, _ := mustAdmin(t, a)
			bob, bobID := mustPlainUser(t, a, "Bob", "bob@example.com", userPassword)
			bobB := onB(bob)
			sessionJWT(t, bobB)
			sessionJWT(t, bob)
			mustOK(t, admin.post(adminPath("ban-user"), mustJSON(t, map[string]any{"userId": bobID})))
			mustRevoked(t, bob)
			eventually(t, replicaLag, "the ban on the other instance", revoked(bobB))
			mustRevoked(t, bobB)
		})
	}
}
