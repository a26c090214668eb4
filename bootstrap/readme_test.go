package bootstrap_test

import (
	"os"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/bootstrap"
)

// Ensure README's configuration table lists every setting with its flag.
func TestREADME_documents_every_setting(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range bootstrap.Settings() {
		row := "| `" + s[0] + "` | `" + s[1] + "` |"
		if !strings.Contains(string(readme), row) {
			t.Errorf("README lacks the row for %s (%s)", s[0], s[1])
		}
	}
}
