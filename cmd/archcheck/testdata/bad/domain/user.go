// Package domain imports a framework directly and speaks a contract's codes.
package domain

import (
	"errors"

	"github.com/gin-gonic/gin" // want rule 1
)

// Ctx leaks the framework.
type Ctx = gin.Context

// ErrNotFound carries a wire code.
var ErrNotFound = errors.New("USER_NOT_FOUND") // want rule 4

// Field is a wire location.
const Field = "body.email" // want rule 4

// Message holds spaces, so it is no code: NOT A CODE.
const Message = "NOT_A CODE"
