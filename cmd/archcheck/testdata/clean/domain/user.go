// Package domain speaks in neutral codes and bare field names.
package domain

import "errors"

// ErrNotFound carries a neutral code.
var ErrNotFound = errors.New("user_not_found")

// Field is a bare field name.
const Field = "email"

// Message holds spaces, so it is no code.
const Message = "NOT_A CODE"
