package harness

import (
	"io"
	"net/http"
	"testing"
)

func OpSend(t testing.TB, req *http.Request) *Response {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// UserinfoAt calls the userinfo endpoint of the Gatehouse at base with a
// bearer token.
func UserinfoAt(t testing.TB, base, token string) *Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/api/auth/oauth2/userinfo", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return OpSend(t, req)
}
