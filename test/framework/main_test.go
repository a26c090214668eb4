package framework

import (
	"os"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }

// testSlug returns slug made the test's own: the top-level test's name,
// lower-cased and hyphenated, before it, so tests sharing an application
// never meet each other's organizations (as harness.Email does for
// addresses).
func testSlug(t testing.TB, slug string) string {
	top, _, _ := strings.Cut(t.Name(), "/")
	return strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(top, "Test"), "_", "-")) + "-" + slug
}
