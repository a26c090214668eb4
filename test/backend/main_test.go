package backend

import (
	"os"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }

// own returns name made the test's own, as harness.Email makes an address
// its own: name, a hyphen and the tag harness.Email draws from the
// top-level test's name (an organization's slug, say, that the tests
// sharing an application never meet).
func own(t testing.TB, name string) string {
	tagged, _, _ := strings.Cut(harness.Email(t, "x@example.com"), "@")
	return name + "-" + strings.TrimPrefix(tagged, "x.")
}

// ownHost returns hostname made the test's own: the tag of own after its
// first label ("shop.example.com" becomes "shop.<tag>.example.com"), in
// the same spelling otherwise.
func ownHost(t testing.TB, hostname string) string {
	first, rest, _ := strings.Cut(hostname, ".")
	return first + "." + strings.TrimPrefix(own(t, ""), "-") + "." + rest
}
