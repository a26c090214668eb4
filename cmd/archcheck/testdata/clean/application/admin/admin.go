// Package admin is a bounded context that names what it needs of another
// as an interface of its own.
package admin

import "example.com/app/application/usecase"

// Links is what admin needs of the password reset.
type Links interface{ ResetLink(c usecase.Caller) string }

// SendReset sends a reset link for c.
func SendReset(l Links, c usecase.Caller) string { return l.ResetLink(c) }
