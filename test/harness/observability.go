package harness

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

var metricsLineRE = regexp.MustCompile(`Metrics: (http://[0-9.:]+/metrics) `)

// metricsURL returns the metrics URL the start-up lines of p name.
func (p *Process) MetricsURL(t *testing.T) string {
	t.Helper()
	m := metricsLineRE.FindStringSubmatch(p.Stdout.String())
	if m == nil {
		t.Fatalf("no metrics line in the start-up lines:\n%s", p.Stdout)
	}
	return m[1]
}

// send makes one request to p and returns its status and headers.
func (p *Process) Send(t *testing.T, method, path, body string, header ...string) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, p.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode, res.Header
}

// logLines returns the JSON log lines of p that carry request_id id.
func (p *Process) LogLines(t *testing.T, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(p.Stdout.String(), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if entry["request_id"] == id {
			out = append(out, entry)
		}
	}
	return out
}

// signedUp signs the benchmark's user up through the handler and returns
// its session cookie's value.
func (a *BenchApp) SignedUp(tb testing.TB) string {
	tb.Helper()
	r := httptest.NewRequest(http.MethodPost, "/api/auth/sign-up/email",
		strings.NewReader(`{"name":"Bench","email":"`+BenchUserEmail+`","password":"`+BenchUserPassword+`"}`))
	r.Header.Set("Content-Type", "application/json")
	w := a.Serve(r)
	for _, c := range w.Result().Cookies() {
		if c.Name == a.Cookie && c.Value != "" {
			return c.Value
		}
	}
	tb.Fatalf("sign-up: %d %s", w.Code, w.Body)
	return ""
}
