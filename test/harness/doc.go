// Package harness is the one way Gatehouse's black-box tests start and speak
// to the service: an application on a store with its settings and its mail
// (App, MustStart, ForStores and the store policy), a client with
// its cookie jar and Origin (Client), the built binary as a process, and the
// shared builders (MustUser, MustAdmin, MustCreateOrg, keys, and each
// surface's world). The tests themselves live in one package per surface
// beside it (test/framework, test/mfa, test/oidc, …); docs/development.md
// says which is which and which stores each runs on.
package harness

import (
	"path/filepath"
	"runtime"
)

// Root is the repository's root folder, wherever a test package runs from.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// RootPath joins elem to the repository's root folder.
func RootPath(elem ...string) string {
	return filepath.Join(append([]string{Root()}, elem...)...)
}
