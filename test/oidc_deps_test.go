package test

// GROUNDWORK: keeps the strict OpenID Connect clients in go.mod until the
// tests that use them land; the client-test helper deletes this file.
import (
	_ "github.com/coreos/go-oidc/v3/oidc"
	_ "golang.org/x/oauth2"
)
