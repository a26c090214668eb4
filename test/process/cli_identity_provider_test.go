package process

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// Ensure "gatehouse identity-provider" manages providers from the command
// line on SQLite: put with the secret on standard input prints the redirect
// URI and never the secret, list shows it, a second put changes only the
// fields given, a malformed provider fails naming the field, delete
// removes it; and GATEHOUSE_IDENTITY_PROVIDERS_FILE declares providers
// applied at start, with the secret taken from a variable, and refuses to
// start on a file that names none.
func TestCLI_identity_provider(t *testing.T) {
	t.Parallel()
	env := []string{"GATEHOUSE_SECRET=" + harness.TestSecret, "GATEHOUSE_BASE_URL=" + harness.CLIBaseURL, "GATEHOUSE_DATA_DIR=" + t.TempDir()}
	const secret = "github-client-secret-not-to-repeat"

	out := harness.MustRunCLI(t, env, secret+"\n", "identity-provider", "put", "--id", "github", "--preset", "github", "--client-id", "Iv1.abc",
		"--client-secret-stdin", "--trusted-for-linking", "true")
	if !strings.Contains(out, `identity provider "github" (github) saved`) || !strings.Contains(out, harness.CLIBaseURL+"/api/auth/callback/github") {
		t.Fatalf("put printed %q", out)
	}
	if strings.Contains(out, secret) {
		t.Fatal("put repeats the client secret")
	}
	out = harness.MustRunCLI(t, env, "", "identity-provider", "put", "--id", "github", "--name", "GitHub Enterprise")
	if !strings.Contains(out, "saved") {
		t.Fatalf("second put printed %q", out)
	}
	out = harness.MustRunCLI(t, env, "", "identity-provider", "list")
	if !strings.Contains(out, "github\tgithub\tenabled\tplatform\tGitHub Enterprise") {
		t.Fatalf("list printed %q", out)
	}

	// A new OpenID provider without its issuer is refused, naming it.
	stdout, stderr, err := harness.RunCLI(t, env, "s3cret\n", "identity-provider", "put", "--id", "corp", "--preset", "oidc", "--client-id", "x", "--client-secret-stdin")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(stderr, "issuer") {
		t.Fatalf("put without an issuer: %v, stdout %q, stderr %q", err, stdout, stderr)
	}

	harness.MustRunCLI(t, env, "", "identity-provider", "delete", "--id", "github")
	if out := harness.MustRunCLI(t, env, "", "identity-provider", "list"); strings.TrimSpace(out) != "" {
		t.Fatalf("list after delete printed %q", out)
	}

	// The providers file: applied at start (migrate starts the service's wiring).
	file := filepath.Join(t.TempDir(), "providers.yaml")
	yaml := "providers:\n  - id: gitlab\n    preset: gitlab\n    clientId: gl-client\n    clientSecretEnv: GITLAB_SECRET\n    trustedForLinking: true\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	withFile := append(env[:len(env):len(env)], "GATEHOUSE_IDENTITY_PROVIDERS_FILE="+file, "GITLAB_SECRET=gl-secret")
	if out := harness.MustRunCLI(t, withFile, "", "identity-provider", "list"); !strings.Contains(out, "gitlab\tgitlab\tenabled\tplatform\tGitLab") {
		t.Fatalf("list with the providers file printed %q", out)
	}
	// A file whose secret variable is unset stops the start, naming the setting.
	noSecret := append(env[:len(env):len(env)], "GATEHOUSE_IDENTITY_PROVIDERS_FILE="+file)
	if _, stderr, err := harness.RunCLI(t, noSecret, "", "identity-provider", "list"); err == nil ||
		!strings.Contains(stderr, "GATEHOUSE_IDENTITY_PROVIDERS_FILE") || !strings.Contains(stderr, "GITLAB_SECRET") {
		t.Fatalf("a file without its secret: %v, stderr %q", err, stderr)
	}
}
