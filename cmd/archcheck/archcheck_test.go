package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// wantMark is how a fixture line says which rule must fire on it.
var wantMark = regexp.MustCompile(`// want rule (\d)`)

// planted reads the "// want rule N" marks of a fixture tree as
// "file:line: rule N" keys.
func planted(t *testing.T, root string) []string {
	t.Helper()
	var want []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		s := bufio.NewScanner(bytes.NewReader(data))
		for line := 1; s.Scan(); line++ {
			for _, m := range wantMark.FindAllStringSubmatch(s.Text(), -1) {
				want = append(want, filepath.ToSlash(rel)+":"+strconv.Itoa(line)+": rule "+m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(want)
	return want
}

// got runs archcheck on root and returns its violations as
// "file:line: rule N" keys, with its exit code and the full output.
func got(t *testing.T, args ...string) (keys []string, code int, out string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code = run(args, &stdout, &stderr)
	key := regexp.MustCompile(`^(\S+:\d+: rule \d): `)
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if line == "" {
			continue
		}
		m := key.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("output line %q is not file:line: rule N: message", line)
		}
		keys = append(keys, m[1])
	}
	sort.Strings(keys)
	return keys, code, stdout.String() + stderr.String()
}

func TestArchcheck_eachRuleFiresOnItsPlantedLine(t *testing.T) {
	root := filepath.Join("testdata", "bad")
	want := planted(t, root)
	keys, code, out := got(t, "-C", root)
	if code != 1 {
		t.Fatalf("exit code %d, want 1\n%s", code, out)
	}
	if strings.Join(keys, "\n") != strings.Join(want, "\n") {
		t.Fatalf("violations:\n%s\nwant exactly:\n%s\noutput:\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"), out)
	}
	for _, rule := range []string{"1", "2", "3", "4", "5", "6", "7", "8"} {
		if !strings.Contains(strings.Join(want, "\n"), "rule "+rule) {
			t.Errorf("the bad fixture plants no violation of rule %s", rule)
		}
	}
	if !strings.Contains(out, "archcheck: rule 1: 2, rule 2: 2, rule 3: 3, rule 4: 4, rule 5: 1, rule 6: 2, rule 7: 1, rule 8: 1") {
		t.Errorf("no count per rule in:\n%s", out)
	}
}

func TestArchcheck_ruleFlagSelectsRules(t *testing.T) {
	root := filepath.Join("testdata", "bad")
	for _, rule := range []string{"1", "2", "3", "4", "5", "6", "7", "8"} {
		keys, code, out := got(t, "-C", root, "-rule", rule)
		if code != 1 || len(keys) == 0 {
			t.Fatalf("-rule %s: exit %d, %d violations\n%s", rule, code, len(keys), out)
		}
		for _, k := range keys {
			if !strings.HasSuffix(k, "rule "+rule) {
				t.Errorf("-rule %s reported %s", rule, k)
			}
		}
	}
	if _, code, _ := got(t, "-C", root, "-rule", "9"); code != 2 {
		t.Errorf("-rule 9: exit %d, want 2", code)
	}
}

func TestArchcheck_cleanTreePasses(t *testing.T) {
	keys, code, out := got(t, "-C", filepath.Join("testdata", "clean"))
	if code != 0 || len(keys) != 0 {
		t.Fatalf("exit %d, violations %v\n%s", code, keys, out)
	}
	if !strings.Contains(out, "rule 1: 0, rule 2: 0, rule 3: 0, rule 4: 0, rule 5: 0, rule 6: 0, rule 7: 0, rule 8: 0") {
		t.Errorf("no count per rule in:\n%s", out)
	}
}

func TestArchcheck_listNamesEveryRule(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"-list"}, &stdout, &stderr)
	out := stdout.String()
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, rule := range []string{"rule 1:", "rule 2:", "rule 3:", "rule 4:", "rule 5:", "rule 6:", "rule 7:", "rule 8:"} {
		if !strings.Contains(out, rule) {
			t.Errorf("-list does not name %s\n%s", rule, out)
		}
	}
}
