package bootstrap_test

import (
	"os"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/bootstrap"
)

// Ensure docs/configuration.md's table lists every setting with its flag.
func TestDocs_configuration_lists_every_setting(t *testing.T) {
	readme, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range bootstrap.Settings() {
		row := "| `" + s[0] + "` | `" + s[1] + "` |"
		if !strings.Contains(string(readme), row) {
			t.Errorf("docs/configuration.md lacks the row for %s (%s)", s[0], s[1])
		}
	}
}
