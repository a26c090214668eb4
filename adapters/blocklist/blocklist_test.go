package blocklist_test

import (
	"bufio"
	"crypto/rand"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/gatehouse/gatehouse/adapters/blocklist"
)

func TestList_entries(t *testing.T) {
	f, err := os.Open("common-passwords.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := 0
	s := bufio.NewScanner(f)
	for s.Scan() {
		p := s.Text()
		lines++
		if p != strings.ToLower(p) {
			t.Errorf("line %d: %q is not lower-case", lines, p)
		}
		if n := len([]rune(p)); n < 8 || n > 128 {
			t.Errorf("line %d: %q has %d characters, want 8..128", lines, p, n)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	l := blocklist.New()
	if got := l.Len(); got < 3000 {
		t.Fatalf("Len() = %d, want at least 3000", got)
	}
	if got, want := l.Len(), lines; got != want {
		t.Fatalf("Len() = %d, want %d (one entry per line, no duplicates)", got, want)
	}
}

func TestList_containsKnownEntries(t *testing.T) {
	l := blocklist.New()
	for _, p := range []string{"password", "password1", "iloveyou", "iloveyou1", "qwerty123", "sunshine", "trustno1", "p@ssw0rd"} {
		if !l.Contains(p) {
			t.Errorf("Contains(%q) = false, want true", p)
		}
	}
}

func TestList_rejectsRandomString(t *testing.T) {
	l := blocklist.New()
	if p := strings.ToLower(rand.Text()[:20]); l.Contains(p) {
		t.Fatalf("Contains(%q) = true for a random string", p)
	}
	if l.Contains("") {
		t.Fatal(`Contains("") = true`)
	}
}

// Ensure Contains matches exactly: callers lower-case first, as the port says.
func TestList_caseSensitiveOnLowerCasedInput(t *testing.T) {
	l := blocklist.New()
	if !l.Contains(strings.ToLower("Password1")) {
		t.Fatal(`Contains(lower("Password1")) = false`)
	}
	if l.Contains("Password1") {
		t.Fatal(`Contains("Password1") = true; Contains must not fold case itself`)
	}
}

func TestList_concurrentFirstUse(t *testing.T) {
	l := blocklist.New()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if !l.Contains("password1") {
				t.Error(`Contains("password1") = false`)
			}
		})
	}
	wg.Wait()
}
