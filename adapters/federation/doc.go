// Package federation implements ports.FederationClient: it talks to the
// upstream identity providers users sign in with. OpenID Connect providers
// (the oidc, google, microsoft and gitlab presets) are read from their
// discovery documents, cached per provider, and their ID tokens are verified
// with coreos/go-oidc against a key set this package caches and refetches
// on an unknown key id (at most once per few seconds). GitHub is plain
// OAuth 2: the profile and the verified primary e-mail come from its REST
// API.
//
// Every upstream call has its own timeout and a bounded response, never
// follows a redirect, and fails with one of the domain.ErrUpstream* errors
// wrapping the cause. No error or log carries a client secret, a token or
// an authorization code.
package federation
