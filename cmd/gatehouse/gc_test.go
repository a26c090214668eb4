package main

import (
	"runtime/debug"
	"testing"
)

// Ensure serve's collector target applies unless the operator set GOGC.
func TestTuneGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old) })
	if got := tuneGC(func(string) string { return "" }); got != serveGCPercent {
		t.Fatalf("without GOGC: %d, want %d", got, serveGCPercent)
	}
	if got := debug.SetGCPercent(100); got != serveGCPercent {
		t.Fatalf("without GOGC the runtime has %d, want %d", got, serveGCPercent)
	}
	if got := tuneGC(func(k string) string {
		if k == "GOGC" {
			return "150"
		}
		return ""
	}); got != 100 {
		t.Fatalf("with GOGC set: %d, want the runtime's own 100 left alone", got)
	}
}
