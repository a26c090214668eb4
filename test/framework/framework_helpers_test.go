package framework

import (
	"os"

	"github.com/gatehouse/gatehouse/test/harness"
)

// commonPasswordsFile returns the embedded list of common passwords, read
// from the source tree.
func commonPasswordsFile() (string, error) {
	b, err := os.ReadFile(harness.RootPath("adapters", "blocklist", "common-passwords.txt"))
	return string(b), err
}
