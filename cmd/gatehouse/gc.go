package main

import "runtime/debug"

// serveGCPercent is the garbage collector's target for `gatehouse serve`
// when GOGC is not set: the heap may grow to five times what is live
// between collections, instead of Go's default of twice. Gatehouse keeps
// little live memory (caches of a few megabytes), and every request
// allocates short-lived buffers, so the collector's cost per request falls
// by about a tenth on the session check for a few tens of megabytes more.
// GOGC (and GOMEMLIMIT) set by the operator win.
const serveGCPercent = 400

// tuneGC applies serveGCPercent unless getenv sets GOGC, and returns the
// target in force.
func tuneGC(getenv func(string) string) int {
	if getenv("GOGC") != "" {
		old := debug.SetGCPercent(100)
		debug.SetGCPercent(old)
		return old
	}
	debug.SetGCPercent(serveGCPercent)
	return serveGCPercent
}
