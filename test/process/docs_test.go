package process

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// commandWord is a command or subcommand as the docs and the usage write it.
var commandWord = regexp.MustCompile(`^[a-z][a-z-]*$`)

// commandsOf reads the commands a synopsis names: "admin create --email E"
// is admin create, "identity-provider list | delete --id ID" is
// identity-provider list and identity-provider delete, "serve     run the
// service" is serve (two spaces end a synopsis). It returns nil when the
// synopsis names no command.
func commandsOf(synopsis string) [][]string {
	synopsis, _, _ = strings.Cut(strings.TrimSpace(synopsis), "  ")
	words := strings.Fields(synopsis)
	if len(words) == 0 || !commandWord.MatchString(words[0]) {
		return nil
	}
	var subs []string
	for _, w := range words[1:] {
		if w == "|" {
			continue
		}
		if !commandWord.MatchString(w) {
			break
		}
		subs = append(subs, w)
	}
	if len(subs) == 0 {
		return [][]string{{words[0]}}
	}
	out := make([][]string, len(subs))
	for i, s := range subs {
		out[i] = []string{words[0], s}
	}
	return out
}

// codeOf returns a Markdown page's code: its fenced blocks, each whole,
// and its inline code spans.
func codeOf(markdown string) (blocks, spans []string) {
	var block []string
	fenced := false
	for line := range strings.SplitSeq(markdown, "\n") {
		if strings.HasPrefix(line, "```") {
			if fenced {
				blocks = append(blocks, strings.Join(block, "\n"))
				block = nil
			}
			fenced = !fenced
			continue
		}
		if fenced {
			block = append(block, line)
			continue
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(line, -1) {
			spans = append(spans, m[1])
		}
	}
	return blocks, spans
}

// documentedCommands returns every "gatehouse <command> [<subcommand>]" the
// code of a Markdown page names (its fenced blocks and inline code, where a
// command is written to be typed), as bin/gatehouse, /gatehouse (in a
// container) or gatehouse, each once, in the order the page names them.
func documentedCommands(markdown string) [][]string {
	blocks, spans := codeOf(markdown)
	var code []string
	for _, b := range blocks {
		code = append(code, strings.Split(b, "\n")...)
	}
	code = append(code, spans...)
	invocation := regexp.MustCompile(`(?:^|[\s/])gatehouse (.*)$`)
	var out [][]string
	for _, line := range code {
		m := invocation.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, c := range commandsOf(m[1]) {
			if !slices.ContainsFunc(out, func(o []string) bool { return slices.Equal(o, c) }) {
				out = append(out, c)
			}
		}
	}
	return out
}

// usageCommands returns the commands "gatehouse help" lists: the lines
// indented by two spaces under "Commands:".
func usageCommands(t *testing.T, usage string) [][]string {
	t.Helper()
	_, list, ok := strings.Cut(usage, "\nCommands:\n")
	if !ok {
		t.Fatalf("gatehouse help has no Commands: list:\n%s", usage)
	}
	var out [][]string
	for line := range strings.SplitSeq(list, "\n") {
		if line == "" {
			break
		}
		if strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") {
			out = append(out, commandsOf(line)...)
		}
	}
	return out
}

func joined(cs [][]string) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = strings.Join(c, " ")
	}
	return out
}

// Ensure docs/operations.md names only commands the binary knows, and every
// one it knows: each "gatehouse <command> [<subcommand>]" its code names is
// in "gatehouse help" and answers --help with exit 0 (its usage), and the
// page's list of commands holds every command of "gatehouse help".
func TestDocs_operations_commands_are_the_binarys(t *testing.T) {
	page, err := os.ReadFile(harness.RootPath("docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := joined(documentedCommands(string(page)))
	env := []string{"GATEHOUSE_DATA_DIR=" + filepath.Join(t.TempDir(), "unused")}
	known := joined(usageCommands(t, harness.MustRunCLI(t, env, "", "help")))
	if len(documented) == 0 || len(known) == 0 {
		t.Fatalf("found no commands: docs/operations.md names %q, gatehouse help lists %q", documented, known)
	}
	for _, c := range documented {
		if !slices.Contains(known, c) {
			t.Errorf("docs/operations.md names gatehouse %s, which gatehouse help does not list (%q)", c, known)
		}
		if out, errOut, err := harness.RunCLI(t, env, "", append(strings.Fields(c), "--help")...); err != nil {
			t.Errorf("gatehouse %s --help: %v, want exit 0\nstdout: %.300s\nstderr: %s", c, err, out, errOut)
		}
	}
	_, list, ok := strings.Cut(string(page), "\n## Commands\n")
	if !ok {
		t.Fatal(`docs/operations.md has no "## Commands" section`)
	}
	listed := joined(documentedCommands(list))
	for _, c := range known {
		if !slices.Contains(listed, c) {
			t.Errorf("gatehouse help lists gatehouse %s, which docs/operations.md's Commands section omits", c)
		}
	}
}

// Ensure the start-up lines docs/operations.md shows are the binary's, on a
// fresh data directory in the working directory as make run has it: the
// same lines in the same order, the migration version among them. Only the
// port (the test's own) and the version word (dev, or the commit make
// build stamps) may differ. Every page that names a migration version names
// the binary's.
func TestDocs_operations_start_lines_are_the_binarys(t *testing.T) {
	page, err := os.ReadFile(harness.RootPath("docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	blocks, _ := codeOf(string(page))
	for _, b := range blocks {
		if strings.Contains(b, "API explorer: ") {
			want = strings.Split(b, "\n")
		}
	}
	if want == nil {
		t.Fatal("docs/operations.md shows no start-up lines (a block with API explorer:)")
	}

	cmd := exec.Command(harness.GatehouseBinary(t), "serve")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GATEHOUSE_ADDR=:0"}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan []string, 1)
	go func() {
		var got []string
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			got = append(got, sc.Text())
			if strings.HasPrefix(sc.Text(), "API explorer: ") {
				break
			}
		}
		lines <- got
	}()
	var got []string
	select {
	case got = <-lines:
	case <-time.After(60 * time.Second):
		t.Fatal("gatehouse serve printed no API explorer line within a minute")
	}
	port := regexp.MustCompile(`serving http://localhost:(\d+) `).FindStringSubmatch(strings.Join(got, "\n"))
	if port == nil {
		t.Fatalf("gatehouse serve printed no serving line:\n%s", strings.Join(got, "\n"))
	}
	first := regexp.MustCompile(`^Gatehouse (\S+) serving`)
	docVersion := first.FindStringSubmatch(want[0])
	for i, line := range got {
		line = strings.ReplaceAll(line, ":"+port[1], ":8080")
		line = strings.ReplaceAll(line, "http://0.0.0.0:", "http://[::]:") // a host without IPv6
		if docVersion != nil {
			line = first.ReplaceAllString(line, "Gatehouse "+docVersion[1]+" serving")
		}
		got[i] = line
	}
	if !slices.Equal(got, want) {
		t.Errorf("docs/operations.md shows the start-up lines\n%s\nthe binary prints (port and version as the page has them)\n%s",
			strings.Join(want, "\n"), strings.Join(got, "\n"))
	}

	version := regexp.MustCompile(`migration version (\d+)`)
	current := version.FindStringSubmatch(strings.Join(got, "\n"))
	if current == nil {
		t.Fatalf("gatehouse serve printed no migration version:\n%s", strings.Join(got, "\n"))
	}
	pages, err := filepath.Glob(harness.RootPath("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(pages, harness.RootPath("README.md")) {
		text, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range version.FindAllStringSubmatch(string(text), -1) {
			if m[1] != current[1] {
				t.Errorf("%s names migration version %s; the binary is at %s", filepath.Base(p), m[1], current[1])
			}
		}
	}
}
