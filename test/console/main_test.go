package console

import (
	"os"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// TestMain runs the package's tests 4 at a time unless -parallel is given
// (harness.DefaultParallel), then stops the shared applications. The
// package's test binary alone under the race detector, on a quiet 2-core
// machine, one run each: 2 at a time 32.3 s, 4 at a time 29.4 s, 8 at a
// time 31.9 s.
func TestMain(m *testing.M) {
	harness.DefaultParallel(4)
	os.Exit(harness.Main(m))
}

// own returns name made the test's own, as harness.Email makes an address
// its own: name, a hyphen and the tag harness.Email draws from the
// top-level test's name (an organization's slug, say, that the tests
// sharing an application never meet).
func own(t testing.TB, name string) string {
	tagged, _, _ := strings.Cut(harness.Email(t, "x@example.com"), "@")
	return name + "-" + strings.TrimPrefix(tagged, "x.")
}
