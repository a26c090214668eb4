// Command testreport says where the time of a test run went: it reads the
// JSON events of `go test -json` (gotestsum's --jsonfile, which make test
// writes to bin/test.json) and prints the run's wall time and its slowest
// packages and top-level tests. With -budget it fails when the run took
// longer, naming the budget, so CI notices a suite that has grown too slow.
//
//	go run ./cmd/testreport -wall 11m32s -budget 25m bin/test.json
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64 // seconds
}

// timing is how long a package or a test took, and how it ended.
type timing struct {
	name    string
	elapsed time.Duration
	action  string
}

// report is what a run's events say.
type report struct {
	first, last time.Time
	packages    []timing
	tests       []timing
	// counts are the tests and subtests that passed, failed and skipped.
	counts map[string]int
}

func main() {
	err := run(os.Args[1:], os.Stdout)
	if err != nil && !errors.Is(err, errOverBudget) {
		fmt.Fprintln(os.Stderr, "testreport:", err)
	}
	if err != nil {
		os.Exit(1)
	}
}

// errOverBudget is the run's verdict when it took longer than -budget.
var errOverBudget = errors.New("over budget")

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("testreport", flag.ContinueOnError)
	top := fs.Int("top", 15, "how many of the slowest packages and tests to list")
	wall := fs.Duration("wall", 0, "the run's wall time as measured outside (0: from the first to the last event)")
	budget := fs.Duration("budget", 0, "fail when the wall time is longer (0: no budget)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: testreport [-top N] [-wall D] [-budget D] FILE.json")
	}
	f, err := os.Open(fs.Arg(0)) // #nosec G304 -- the file its caller names, read only
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	r, err := read(f)
	if err != nil {
		return err
	}
	if *wall == 0 {
		*wall = r.last.Sub(r.first).Round(time.Second)
	}
	return r.print(out, *top, *wall, *budget)
}

// read collects the timings of every package and top-level test of the
// events in in.
func read(in io.Reader) (*report, error) {
	r := &report{counts: map[string]int{}}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			continue // a line the tests printed outside the JSON stream
		}
		if !e.Time.IsZero() {
			if r.first.IsZero() || e.Time.Before(r.first) {
				r.first = e.Time
			}
			if e.Time.After(r.last) {
				r.last = e.Time
			}
		}
		if e.Action != "pass" && e.Action != "fail" && e.Action != "skip" {
			continue
		}
		if e.Test != "" {
			r.counts[e.Action]++
		}
		t := timing{elapsed: time.Duration(e.Elapsed * float64(time.Second)), action: e.Action}
		switch {
		case e.Test == "":
			t.name = e.Package
			r.packages = append(r.packages, t)
		case !strings.Contains(e.Test, "/"):
			t.name = shortPackage(e.Package) + "." + e.Test
			r.tests = append(r.tests, t)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(r.packages) == 0 {
		return nil, errors.New("no package finished in this file: is it go test -json's output?")
	}
	return r, nil
}

// print writes the report; it returns errOverBudget when wall is over a
// budget that is not zero.
func (r *report) print(out io.Writer, top int, wall, budget time.Duration) error {
	line := fmt.Sprintf("make test: %s of wall time, %d packages, %d top-level tests", wall, len(r.packages), len(r.tests))
	if budget > 0 {
		line += fmt.Sprintf(" (budget %s)", budget)
	}
	_, _ = fmt.Fprintln(out, line)
	for _, list := range []struct {
		title string
		items []timing
	}{{"packages", r.packages}, {"tests", r.tests}} {
		slices.SortStableFunc(list.items, func(a, b timing) int { return cmp.Compare(b.elapsed, a.elapsed) })
		n := min(top, len(list.items))
		_, _ = fmt.Fprintf(out, "The %d slowest %s:\n", n, list.title)
		for _, t := range list.items[:n] {
			mark := ""
			if t.action != "pass" {
				mark = " (" + t.action + ")"
			}
			_, _ = fmt.Fprintf(out, "  %8.1fs  %s%s\n", t.elapsed.Seconds(), t.name, mark)
		}
	}
	over := budget > 0 && wall > budget
	if over {
		_, _ = fmt.Fprintf(out, "make test took %s, over its budget of %s (docs/development.md, \"Tests\"): find what grew in the lists above.\n", wall, budget)
	}
	// Last, the run's verdict in the plain form any reader of a log knows.
	_, _ = fmt.Fprintf(out, "tests: %d passed, %d failed, %d skipped\n", r.counts["pass"], r.counts["fail"], r.counts["skip"])
	if over {
		return errOverBudget
	}
	return nil
}

// shortPackage is the last element of a package's import path.
func shortPackage(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}
