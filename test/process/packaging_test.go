package process

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
	"go.yaml.in/yaml/v3"
)

// mustRead returns a file of the repository's root.
func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(harness.RootPath(name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// composeFile is the part of docker-compose.yml these tests read.
type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Environment map[string]string `yaml:"environment"`
		Ports       []string          `yaml:"ports"`
		Healthcheck struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
		Build struct {
			Args map[string]string `yaml:"args"`
		} `yaml:"build"`
	} `yaml:"services"`
}

// Ensure Compose can run Gatehouse in production mode (every setting
// production requires is passed through) and in development with a mail
// catcher, checks the service's health with the binary, says how to create
// the first administrator, and pins its images.
func TestPackaging_compose(t *testing.T) {
	text := mustRead(t, "docker-compose.yml")
	var c composeFile
	if err := yaml.Unmarshal([]byte(text), &c); err != nil {
		t.Fatal(err)
	}
	g, ok := c.Services["gatehouse"]
	if !ok {
		t.Fatal("no gatehouse service")
	}
	for _, v := range []string{"GATEHOUSE_ENV", "GATEHOUSE_BASE_URL", "GATEHOUSE_SECRET", "GATEHOUSE_SMTP_HOST", "GATEHOUSE_SMTP_PORT",
		"GATEHOUSE_SMTP_TLS", "GATEHOUSE_SMTP_USERNAME", "GATEHOUSE_SMTP_PASSWORD", "GATEHOUSE_INVITATION_URL"} {
		if !strings.Contains(g.Environment[v], "${"+v) {
			t.Errorf("the gatehouse service does not pass %s through (%q)", v, g.Environment[v])
		}
	}
	m, ok := c.Services["mailpit"]
	if !ok || !strings.HasPrefix(g.Environment["GATEHOUSE_SMTP_HOST"], "${GATEHOUSE_SMTP_HOST:-mailpit}") {
		t.Fatalf("no mail catcher used by default (services %v, SMTP host %q)", c.Services, g.Environment["GATEHOUSE_SMTP_HOST"])
	}
	if !regexp.MustCompile(`:v\d+\.\d+\.\d+$`).MatchString(m.Image) || !slices.Contains(m.Ports, "8025:8025") {
		t.Errorf("mail catcher image %q (want an exact version) and ports %v (want the UI on 8025)", m.Image, m.Ports)
	}
	if !slices.Equal(g.Healthcheck.Test, []string{"CMD", "/gatehouse", "healthcheck"}) {
		t.Errorf("gatehouse healthcheck = %v", g.Healthcheck.Test)
	}
	if g.Build.Args["VERSION"] == "" {
		t.Error("the build passes no VERSION")
	}
	if !strings.Contains(text, "/gatehouse admin create --email") || !strings.Contains(text, "--password-stdin") {
		t.Error("the file does not say how to create the first administrator")
	}
}

// Ensure the image builds reproducibly from a VERSION argument and checks
// its own health with the binary (the image has no shell).
func TestPackaging_dockerfile(t *testing.T) {
	text := mustRead(t, "Dockerfile")
	for _, want := range []string{"-trimpath", "-buildvcs=false", "ARG VERSION", "bootstrap.Version=${VERSION}", "FROM scratch", "USER 65532:65532"} {
		if !strings.Contains(text, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if !regexp.MustCompile(`(?m)^HEALTHCHECK .*\\\n\s+CMD \["/gatehouse", "healthcheck"\]|^HEALTHCHECK .*CMD \["/gatehouse", "healthcheck"\]`).MatchString(text) {
		t.Error(`Dockerfile has no HEALTHCHECK running ["/gatehouse", "healthcheck"]`)
	}
	if mk := mustRead(t, "Makefile"); !strings.Contains(mk, "--build-arg VERSION=$(VERSION)") {
		t.Error("make docker does not pass VERSION")
	}
}

// Ensure the build context leaves out history, build output, local data,
// installed node modules and secrets.
func TestPackaging_dockerignore(t *testing.T) {
	lines := strings.Split(mustRead(t, ".dockerignore"), "\n")
	for _, want := range []string{".git", "bin/", "data/", "node_modules/", "**/node_modules/", "test/clients/node_modules/", "*.test", "*.out", "**/secret", ".env"} {
		if !slices.Contains(lines, want) {
			t.Errorf(".dockerignore lacks %q", want)
		}
	}
}

// Ensure LICENSE is the Apache License 2.0, byte for byte.
func TestPackaging_license(t *testing.T) {
	sum := sha256.Sum256([]byte(mustRead(t, "LICENSE")))
	// sha256 of https://www.apache.org/licenses/LICENSE-2.0.txt
	if got, want := hex.EncodeToString(sum[:]), "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"; got != want {
		t.Fatalf("LICENSE sha256 = %s, want the Apache License 2.0's %s", got, want)
	}
	for _, name := range []string{"SECURITY.md", "CONTRIBUTING.md"} {
		if len(mustRead(t, name)) < 500 {
			t.Errorf("%s is nearly empty", name)
		}
	}
}
