// Package application holds Gatehouse's use cases: commands that change state
// and queries that read it, each a handler built on ports. It decides every
// policy question; the HTTP edge only translates.
package application
