package harness

import (
	"testing"
)

// MustStatusTrue fails unless r is 200 {status:true}.
func MustStatusTrue(t testing.TB, r *Response) {
	t.Helper()
	if body := MustOK(t, r); body["status"] != true {
		t.Fatalf("body = %s, want {status:true}", r.Body)
	}
}
