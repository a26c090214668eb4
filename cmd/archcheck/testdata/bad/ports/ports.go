// Package ports is clean.
package ports

// Page is a page request.
type Page struct{ Limit int }
