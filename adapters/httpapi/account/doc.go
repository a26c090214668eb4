// Package account serves the self-service account pages under /account:
// every signed-in user's own profile, security (two-factor and passkeys),
// sessions, linked accounts and organizations, on the shell the console
// uses (internal/shell: strict headers, single-use form tokens, the origin
// check, the session gate), through the framework's own use cases (what
// /api/auth/* calls). An impersonation session sees the pages under the
// banner; its forms are refused, so an administrator looks but changes
// nothing in someone else's name.
package account
