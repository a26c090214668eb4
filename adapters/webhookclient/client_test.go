package webhookclient_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/webhookclient"
	"github.com/gatehouse/gatehouse/domain"
)

// Ensure a host name that resolves to a loopback address is refused at
// connection time unless private targets are allowed, and that nothing
// reaches the server then.
func TestPost_refuses_private_addresses_after_resolution(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)

	refusing := webhookclient.New(webhookclient.Config{Timeout: 5 * time.Second})
	for _, target := range []string{url, srv.URL, "http://[::1]:1/", "http://169.254.169.254/latest/meta-data/"} {
		_, err := refusing.Post(context.Background(), target, nil, []byte("{}"))
		if err == nil || !strings.HasPrefix(err.Error(), "refused: ") {
			t.Errorf("Post %s = %v, want a refusal", target, err)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the server got %d requests through a refusing poster", hits.Load())
	}

	allowing := webhookclient.New(webhookclient.Config{AllowPrivate: true, Timeout: 5 * time.Second})
	res, err := allowing.Post(context.Background(), url, nil, []byte("{}"))
	if err != nil || res.StatusCode != http.StatusOK || hits.Load() != 1 {
		t.Fatalf("Post with private targets allowed = %+v, %v (hits %d)", res, err, hits.Load())
	}
}

// Ensure the poster sends the body and headers as given, keeps at most
// 1 KiB of the answer, and does not follow a redirect.
func TestPost_sends_as_given_and_keeps_a_snippet(t *testing.T) {
	var got struct {
		body, id, ctype string
	}
	followed := atomic.Bool{}
	mux := http.NewServeMux()
	mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.body, got.id, got.ctype = string(b), r.Header.Get("webhook-id"), r.Header.Get("Content-Type")
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, strings.Repeat("a", 5000))
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/elsewhere", func(http.ResponseWriter, *http.Request) { followed.Store(true) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	p := webhookclient.New(webhookclient.Config{AllowPrivate: true, Timeout: 5 * time.Second})

	res, err := p.Post(context.Background(), srv.URL+"/hook", [][2]string{{"webhook-id", "msg_1"}, {"Content-Type", "application/json"}}, []byte(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusAccepted || len(res.Body) != domain.MaxWebhookResponseSnippet {
		t.Fatalf("response = %d with %d bytes, want 202 with 1024", res.StatusCode, len(res.Body))
	}
	if got.body != `{"a":1}` || got.id != "msg_1" || got.ctype != "application/json" {
		t.Fatalf("the server got %+v", got)
	}
	res, err = p.Post(context.Background(), srv.URL+"/moved", nil, nil)
	if err != nil || res.StatusCode != http.StatusTemporaryRedirect || followed.Load() {
		t.Fatalf("redirect: %+v, %v, followed %v; want the 307 itself", res, err, followed.Load())
	}
}

// Ensure a slow endpoint is cut off by the timeout.
func TestPost_times_out(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	p := webhookclient.New(webhookclient.Config{AllowPrivate: true, Timeout: 200 * time.Millisecond})
	if _, err := p.Post(context.Background(), srv.URL, nil, nil); err == nil || !strings.HasPrefix(err.Error(), "timeout") {
		t.Fatalf("Post to a silent server = %v, want a timeout", err)
	}
}
