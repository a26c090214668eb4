package backend

import (
	"os"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }

// ownHost returns hostname made the test's own: the tag of harness.Own
// after its first label ("shop.example.com" becomes
// "shop.<tag>.example.com"), in the same spelling otherwise.
func ownHost(t testing.TB, hostname string) string {
	first, rest, _ := strings.Cut(hostname, ".")
	return first + "." + strings.TrimPrefix(harness.Own(t, ""), "-") + "." + rest
}
