// Package usecase is what the contexts share.
package usecase

// Caller names who calls a use case.
type Caller string
