package edge

import "github.com/gin-gonic/gin"

// Router is what a surface package registers its plain gin routes through,
// each with its policy; httpapi's routes.go hands it over.
type Router interface {
	// Handle serves method and path (a gin template) with policy p.
	Handle(method, path string, p Policy, h gin.HandlerFunc)
	// Page serves a GET page at path with policy p, and a permanent
	// redirect to it from path with a trailing slash.
	Page(path string, p Policy, h gin.HandlerFunc)
	// NotFound answers as for a path no route serves.
	NotFound(c *gin.Context)
}
