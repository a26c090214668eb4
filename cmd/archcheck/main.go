// Command archcheck enforces Gatehouse's architecture rules (STYLE 2.0 and
// 2.7). "make archcheck" runs it from the module root; it prints each
// violation as "file:line: rule N: message", a count per rule on standard
// error, and exits 1 if it found any (2 if it could not check).
//
// The rules:
//
//  1. domain/, ports/ and application/ never import gin, huma, gorm or wire,
//     even transitively. The import graph comes from "go list -deps" (test
//     files excluded, as they never ship); a violation is reported once, at
//     the import line where the path to the forbidden package leaves the
//     inner layers (not again at every layer package that imports that one).
//
//  2. The contract packages under adapters/httpapi (framework, oidc, admin,
//     backend, pages, explorer) never import each other, adapters/httpapi
//     itself, or any other package of adapters/httpapi except internal/edge
//     (and, for the HTML surface pages, internal/shell). Within the module
//     they may import only those, application, domain and ports (and their
//     own subpackages). Test files included, which may also import
//     adapters/memory and test/usecasetest (the use cases on the memory
//     stores) to build a package's handlers.
//
//  3. No URL-path prefix test outside adapters/httpapi/internal/edge: in
//     adapters/httpapi and its subpackages (non-test files), a call to
//     strings.HasPrefix, TrimPrefix, CutPrefix, HasSuffix, TrimSuffix or
//     CutSuffix may not take a path as an argument. A path is a string
//     literal, or a constant of this package or of a package of this module
//     (resolved from the source), whose value is "/" followed by a segment
//     character (letter, digit, '-', '.', '_', '~' or ':'). A bare "/" or
//     "//" is URL syntax (is this target relative?), not a route's path, and
//     is allowed. Suffixes count too: strings.HasSuffix(p, "/jwks") guesses
//     a route from its path as much as a prefix does.
//
//  4. No contract wire vocabulary in domain/, ports/, application/,
//     adapters/memory/ or adapters/gormstore/ (non-test files): no string
//     literal that is an UPPER_SNAKE code (the whole literal matches
//     ^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$) and none that starts with a location
//     prefix ("body.", "query.", "path.", "header."). What is not a code is
//     left out by construction, not by a list of exceptions per file: struct
//     tags and import paths are not checked, and a literal holding a space
//     (SQL text, messages) cannot match the code pattern. Environment
//     variable names are not codes either: the first argument of os.Getenv,
//     LookupEnv, Setenv or Unsetenv and the value of a constant whose name
//     ends in "Env" are not checked. The one named exception is the SQL
//     keywords that look like codes (CURRENT_TIMESTAMP, CURRENT_DATE,
//     CURRENT_TIME, LOCALTIMESTAMP, LOCALTIME), which storage hands to the
//     database as SQL.
//
//  5. The driven adapters (every package under adapters/ outside
//     adapters/httpapi: the stores, the mailer, the hasher, the limiters)
//     import, within the module, only domain, ports and the packages of
//     their own adapter (adapters/gormstore/gormtest may import
//     adapters/gormstore). Non-test files: a test may reach for the
//     conformance suites and fixtures it needs.
//
//  6. The HTML surfaces (adapters/httpapi/console, adapters/httpapi/account
//     and adapters/httpapi/pages: pages for people) import neither each
//     other nor the API contract packages (framework, oidc, admin, backend,
//     explorer: JSON for programs), and those never import them, test
//     files included; what they share lives in internal/shell and
//     internal/edge. Rule 2 already keeps pages apart from the contracts;
//     this rule adds the console and the account pages.
//
//  7. No bounded context under application/ imports another, within the
//     module, except application/usecase, what they share: a context that
//     needs another's use case names what it needs as an interface of its
//     own, which bootstrap binds. The root package application, which
//     gathers the contexts for wiring, is exempt. Non-test files: a
//     black-box test may build the other contexts its world needs.
//
//  8. No handler reaches a global application value: no package under
//     adapters/httpapi except the composition root (adapters/httpapi
//     itself, which builds every package with the use cases it calls)
//     imports the application root package (application, which holds
//     application.Application), test files included. The packages import
//     the bounded contexts (application/account, …) for their types. With
//     the import gone, nothing under adapters/httpapi (edge.Kit included)
//     can hold an *application.Application.
//
// Flags: -rule picks the rules to run ("1,2,3,4,5,6,7,8" or "all"), -list
// prints the rules, -C sets the module root (default: the current directory).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// violation is one broken rule at one line.
type violation struct {
	file string // relative to the module root
	line int
	rule int
	msg  string
}

func (v violation) String() string {
	return fmt.Sprintf("%s:%d: rule %d: %s", v.file, v.line, v.rule, v.msg)
}

// rules lists every rule, in the order they run.
var rules = []struct {
	n     int
	title string
	check func(m *module) ([]violation, error)
}{
	{1, "domain/, ports/ and application/ never import gin, huma, gorm or wire, even transitively", checkLayers},
	{2, "contract packages under adapters/httpapi never import each other nor adapters/httpapi", checkContracts},
	{3, "no URL-path prefix test outside adapters/httpapi/internal/edge", checkPathTests},
	{4, "no UPPER_SNAKE wire code or body./query./path./header. location in the inner layers and stores", checkWireVocabulary},
	{5, "driven adapters import only domain, ports and their own adapter's packages", checkDrivenAdapters},
	{6, "the HTML surfaces (console, account, pages) never import each other, and they and the API contract packages never import each other", checkSurfaces},
	{7, "no application context imports another, except application/usecase", checkContexts},
	{8, "no handler reaches a global application value: only adapters/httpapi imports the application root package", checkGlobalApplication},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the exit, for the tests.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("archcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	only := fs.String("rule", "all", `rules to check: "all" or a comma-separated list such as "1,2,3"`)
	list := fs.Bool("list", false, "list the rules and exit")
	root := fs.String("C", ".", "the module root")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *list {
		for _, r := range rules {
			fmt.Fprintf(stdout, "rule %d: %s\n", r.n, r.title)
		}
		return 0
	}
	selected, err := parseRules(*only)
	if err != nil {
		fmt.Fprintln(stderr, "archcheck:", err)
		return 2
	}
	m, err := loadModule(*root)
	if err != nil {
		fmt.Fprintln(stderr, "archcheck:", err)
		return 2
	}
	var all []violation
	var counts []string
	for _, r := range rules {
		if !selected[r.n] {
			continue
		}
		vs, err := r.check(m)
		if err != nil {
			fmt.Fprintf(stderr, "archcheck: rule %d: %v\n", r.n, err)
			return 2
		}
		all = append(all, vs...)
		counts = append(counts, fmt.Sprintf("rule %d: %d", r.n, len(vs)))
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.file != b.file {
			return a.file < b.file
		}
		if a.line != b.line {
			return a.line < b.line
		}
		return a.rule < b.rule
	})
	for _, v := range all {
		fmt.Fprintln(stdout, v)
	}
	fmt.Fprintf(stderr, "archcheck: %s\n", strings.Join(counts, ", "))
	if len(all) > 0 {
		return 1
	}
	return 0
}

// known reports whether n numbers a rule.
func known(n int) bool {
	for _, r := range rules {
		if r.n == n {
			return true
		}
	}
	return false
}

func parseRules(s string) (map[int]bool, error) {
	selected := map[int]bool{}
	if s == "all" {
		for _, r := range rules {
			selected[r.n] = true
		}
		return selected, nil
	}
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || !known(n) {
			return nil, fmt.Errorf("-rule: %q is not a rule (see -list)", part)
		}
		selected[n] = true
	}
	return selected, nil
}
