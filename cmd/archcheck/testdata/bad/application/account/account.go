// Package account is a bounded context.
package account

import "example.com/app/application/usecase"

// ResetLink mails a reset link to the caller.
func ResetLink(c usecase.Caller) string { return "link for " + string(c) }
