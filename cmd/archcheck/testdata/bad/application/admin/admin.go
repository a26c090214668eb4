// Package admin is a bounded context that reaches into another.
package admin

import (
	"example.com/app/application/account" // want rule 7
	"example.com/app/application/usecase"
)

// SendReset sends a reset link for c.
func SendReset(c usecase.Caller) string { return account.ResetLink(c) }
