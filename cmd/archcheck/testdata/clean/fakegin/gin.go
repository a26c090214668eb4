// Package gin stands in for the web framework.
package gin

// Context is a request.
type Context struct{}
