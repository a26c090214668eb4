package federation

import (
	"os"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// TestMain runs the package's tests 4 at a time unless -parallel is given
// (harness.DefaultParallel): each federation test mostly waits on the
// round trips between its two applications and its browser. The package's
// test binary alone under the race detector, on a quiet 2-core machine, one
// run each: 2 at a time 16.4 s, 4 at a time 14.0 s, 8 at a time 14.7 s.
func TestMain(m *testing.M) {
	harness.DefaultParallel(4)
	os.Exit(m.Run())
}
