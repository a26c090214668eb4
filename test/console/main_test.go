package console

import (
	"os"
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
