// Package lib depends on the framework; it is no inner layer itself.
package lib

import "github.com/gin-gonic/gin"

// Handler uses the framework.
func Handler(*gin.Context) {}
