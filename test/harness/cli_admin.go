package harness

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/bootstrap"
)

// CLIBaseURL is the base URL the CLI tests configure, and so the Origin
// their browser-like requests send.
const CLIBaseURL = "http://localhost:8080"

// RunCLI runs the gatehouse binary with args and env (besides PATH), with
// stdin as its standard input, and returns its output and exit error.
func RunCLI(t *testing.T, env []string, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(GatehouseBinary(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// MustRunCLI runs the binary and fails unless it exits 0.
func MustRunCLI(t *testing.T, env []string, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := RunCLI(t, env, stdin, args...)
	if err != nil {
		t.Fatalf("gatehouse %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// ProcessClient is a browser-like client of a running binary.
func ProcessClient(t testing.TB, p *Process) *Client {
	app := &App{Server: &httptest.Server{URL: p.URL}, Cfg: bootstrap.Config{HTTP: bootstrap.HTTPConfig{BaseURL: CLIBaseURL}}}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Client{T: t, App: app, Origin: CLIBaseURL, Cookies: map[string]string{}, HTTP: hc}
}

var (
	CLITokenRE  = regexp.MustCompile(`"token":"([^"]+)"`)
	CLISecretRE = regexp.MustCompile(`(?m)^(gh_sk_[A-Za-z0-9]{43})$`)
	CLICreated  = regexp.MustCompile(`administrator (\S+) (created|promoted) \(id ([^)]+)\)`)
)

// KeyGet calls GET /api/service-key on the process with secret as Bearer.
func (p *Process) KeyGet(t *testing.T, secret string) *Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, p.URL+"/api/service-key", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(res.Body)
	return &Response{Status: res.StatusCode, Header: res.Header, Body: b.Bytes()}
}
