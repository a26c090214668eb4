package framework

import (
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// forStores runs fn in parallel against a fresh app on each of stores.
func forStores(t *testing.T, stores []harness.Store, fn func(t *testing.T, app *harness.TestApp)) {
	t.Helper()
	for _, s := range stores {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			fn(t, harness.MustStart(t, s, harness.MustConfig(t, nil)))
		})
	}
}
