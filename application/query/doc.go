// Package query holds the read-only use cases.
package query
