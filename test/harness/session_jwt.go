package harness

import (
	"net/http"
	"testing"
	"time"
)

// SessionJWT calls get-session through c and returns its set-auth-jwt,
// verified against the key set, and its claims; it fails when signed out.
func SessionJWT(t testing.TB, c *Client) (string, map[string]any) {
	t.Helper()
	r := c.Get("/api/auth/get-session")
	MustStatus(t, r, http.StatusOK)
	token := r.Header.Get("set-auth-jwt")
	if token == "" {
		t.Fatalf("get-session sent no set-auth-jwt: %s", r.Body)
	}
	_, claims := MustVerifyJWT(t, c, token)
	if user := MustUser(t, r.JSON(t)); claims["name"] != user["name"] || claims["sub"] != user["id"] {
		t.Fatalf("set-auth-jwt says %v, get-session's user %v", claims, user)
	}
	return token, claims
}

// ReplicaLag bounds how long a change made through one instance may take
// to reach another: the session cache's lifetime (GATEHOUSE_SESSION_CACHE_TTL,
// 500ms by default, at most 1s). The cache counts that lifetime on the
// monotonic wall clock, not on the app's Clock (usecase.SessionCache): a
// test waits for it for real, one of the waits that advancing the clock
// cannot replace.
const ReplicaLag = time.Second

// Eventually polls ok until it holds, and fails the test if it still does
// not once within has passed since the call.
func Eventually(t testing.TB, within time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen within %v", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
