package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// events is a run of two packages: a slow test with a subtest, a fast one,
// a failed one, and a line a test printed outside the stream.
const events = `{"Time":"2026-11-29T07:00:00Z","Action":"start","Package":"example.com/m/a"}
{"Time":"2026-11-29T07:00:01Z","Action":"run","Package":"example.com/m/a","Test":"TestSlow"}
{"Time":"2026-11-29T07:01:00Z","Action":"pass","Package":"example.com/m/a","Test":"TestSlow/sub","Elapsed":58}
{"Time":"2026-11-29T07:01:00Z","Action":"pass","Package":"example.com/m/a","Test":"TestSlow","Elapsed":59}
{"Time":"2026-11-29T07:01:01Z","Action":"pass","Package":"example.com/m/a","Test":"TestFast","Elapsed":0.5}
not json: a test printed this
{"Time":"2026-11-29T07:01:02Z","Action":"pass","Package":"example.com/m/a","Elapsed":62}
{"Time":"2026-11-29T07:00:00Z","Action":"start","Package":"example.com/m/b"}
{"Time":"2026-11-29T07:00:30Z","Action":"fail","Package":"example.com/m/b","Test":"TestBroken","Elapsed":30}
{"Time":"2026-11-29T07:02:00Z","Action":"fail","Package":"example.com/m/b","Elapsed":120}
`

func writeEvents(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.json")
	if err := os.WriteFile(path, []byte(events), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Ensure the report lists packages and top-level tests slowest first (never
// a subtest), marks failures, and takes the wall time from the events when
// none is given.
func TestReport_lists_the_slowest(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-top", "2", writeEvents(t)}, &out); err != nil {
		t.Fatal(err)
	}
	want := `make test: 2m0s of wall time, 2 packages, 3 top-level tests
The 2 slowest packages:
     120.0s  example.com/m/b (fail)
      62.0s  example.com/m/a
The 2 slowest tests:
      59.0s  a.TestSlow
      30.0s  b.TestBroken (fail)
tests: 3 passed, 1 failed, 0 skipped
`
	if out.String() != want {
		t.Fatalf("report:\n%s\nwant:\n%s", out.String(), want)
	}
}

// Ensure a run over its budget fails with a line naming the budget, and one
// within it passes.
func TestReport_budget(t *testing.T) {
	path := writeEvents(t)
	var out bytes.Buffer
	err := run([]string{"-wall", "26m", "-budget", "25m", path}, &out)
	if !errors.Is(err, errOverBudget) || !strings.Contains(out.String(), "make test took 26m0s, over its budget of 25m0s") {
		t.Fatalf("over budget: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := run([]string{"-wall", "24m", "-budget", "25m", path}, &out); err != nil {
		t.Fatalf("within budget: %v\n%s", err, out.String())
	}
}

// Ensure a file without a finished package is refused rather than reported
// as an empty run.
func TestReport_refuses_other_files(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.json")
	if err := os.WriteFile(path, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{path}, &bytes.Buffer{}); err == nil {
		t.Fatal("a file of no events was reported")
	}
}
