package contracts

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// TestDocs_relative_links_resolve checks that every relative link in the
// README, docs/ and the repository's other guides names a file that exists
// and, when it carries a #fragment, a heading of that file.
func TestDocs_relative_links_resolve(t *testing.T) {
	pages, err := filepath.Glob(harness.RootPath("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, harness.RootPath("README.md"), harness.RootPath("CONTRIBUTING.md"), harness.RootPath("SECURITY.md"))
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Errorf("%s: %v", page, err)
			continue
		}
		for _, m := range link.FindAllStringSubmatch(string(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, fragment, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			body, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s links to %s, which does not exist", page, target)
				continue
			}
			if fragment != "" && !hasAnchor(string(body), fragment) {
				t.Errorf("%s links to %s, but %s has no heading with that anchor", page, target, path)
			}
		}
	}
}

// TestDocs_hold_no_merge_conflict checks that the README, docs/ and the
// other guides hold no line a merge left (<<<<<<<, =======, >>>>>>>).
func TestDocs_hold_no_merge_conflict(t *testing.T) {
	pages, err := filepath.Glob(harness.RootPath("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, harness.RootPath("README.md"), harness.RootPath("CONTRIBUTING.md"), harness.RootPath("SECURITY.md"))
	marker := regexp.MustCompile(`(?m)^(<{7} |={7}$|>{7} )`)
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Errorf("%s: %v", page, err)
			continue
		}
		if loc := marker.FindIndex(text); loc != nil {
			t.Errorf("%s line %d is a merge conflict's marker", page, strings.Count(string(text[:loc[0]]), "\n")+1)
		}
	}
}

// hasAnchor reports whether markdown has a heading whose GitHub anchor is
// fragment: lower case, spaces to hyphens, punctuation other than - and _
// dropped.
func hasAnchor(markdown, fragment string) bool {
	for line := range strings.SplitSeq(markdown, "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range title {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		if b.String() == fragment {
			return true
		}
	}
	return false
}
