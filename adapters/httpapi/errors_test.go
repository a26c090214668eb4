package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/framework"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/application"
	"github.com/gatehouse/gatehouse/application/health"
	"github.com/gatehouse/gatehouse/domain"
)

func TestStatusFor_every_kind(t *testing.T) {
	want := map[domain.Kind]int{
		domain.KindInternal: 500, domain.KindInvalid: 400, domain.KindUnauthenticated: 401,
		domain.KindForbidden: 403, domain.KindNotFound: 404, domain.KindConflict: 409,
		domain.KindRateLimited: 429, domain.KindUnavailable: 503,
	}
	for _, k := range domain.Kinds {
		got, ok := want[k]
		if !ok {
			t.Fatalf("kind %v has no expected status in this test: add it", k)
		}
		if edge.StatusFor(k) != got {
			t.Errorf("statusFor(%v) = %d, want %d", k, edge.StatusFor(k), got)
		}
	}
	if edge.StatusFor(domain.KindUnauthenticated) == edge.StatusFor(domain.KindForbidden) {
		t.Fatal("401 and 403 merged")
	}
}

// newTestServer builds a Server on memory adapters with extra operations that
// return the error under test.
func newTestServer(t *testing.T) (*Server, *strings.Builder) {
	t.Helper()
	logs := &strings.Builder{}
	app := &application.Application{Readiness: health.NewReadinessHandler(memory.NewHealthChecker())}
	s := NewServer(edge.Config{BaseURL: "http://localhost:8080", MaxBodyBytes: 4096, SessionCookieName: "gatehouse.session_token", Secrets: []string{"test-secret"}},
		app, slog.New(slog.NewJSONHandler(logs, nil)))
	return s, logs
}

type failInput struct {
	Kind string `path:"kind"`
}

type echoInput struct {
	Limit int `query:"limit" minimum:"1" maximum:"100" default:"10"`
	Body  struct {
		Hostname string `json:"hostname" maxLength:"20"`
		Count    int    `json:"count" minimum:"0"`
	}
}

type emptyOutput struct{}

func addErrorRoutes(s *Server) {
	kinds := map[string]domain.Kind{}
	for _, k := range domain.Kinds {
		kinds[k.String()] = k
	}
	fail := func(_ context.Context, in *failInput) (*emptyOutput, error) {
		if in.Kind == "panic" {
			panic("secret panic detail")
		}
		return nil, &domain.Error{Kind: kinds[in.Kind], Code: "test.failure", Message: "it failed",
			Fields: []domain.FieldViolation{{Field: "x", Message: "is wrong"}}, Err: io.ErrUnexpectedEOF}
	}
	echo := func(context.Context, *echoInput) (*emptyOutput, error) { return &emptyOutput{}, nil }
	register(s, edge.ContractAuth, huma.Operation{OperationID: "fail", Method: http.MethodGet, Path: "/api/test/fail/{kind}"}, fail)
	register(s, edge.ContractFramework, huma.Operation{OperationID: "fail-fw", Method: http.MethodGet, Path: "/api/auth/test/fail/{kind}"}, fail)
	register(s, edge.ContractAuth, huma.Operation{OperationID: "echo", Method: http.MethodPost, Path: "/api/test/echo"}, echo)
	register(s, edge.ContractFramework, huma.Operation{OperationID: "echo-fw", Method: http.MethodPost, Path: "/api/auth/test/echo"}, echo)
}

// register routes a test operation in c with the vocabulary of its contract.
func register[I, O any](s *Server, c edge.Contract, op huma.Operation, h func(context.Context, *I) (*O, error)) {
	words := edge.ProblemWords
	if c == edge.ContractFramework {
		words = framework.Words
	}
	edge.Register(s.Kit, c, edge.WithWords(op, words), h)
}

func serve(s *Server, method, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	return w
}

func TestErrors_every_kind_in_both_shapes(t *testing.T) {
	s, logs := newTestServer(t)
	addErrorRoutes(s)
	for _, k := range domain.Kinds {
		t.Run(k.String(), func(t *testing.T) {
			w := serve(s, http.MethodGet, "/api/test/fail/"+k.String(), "")
			if w.Code != edge.StatusFor(k) {
				t.Fatalf("status = %d, want %d", w.Code, edge.StatusFor(k))
			}
			var p edge.Problem
			if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || w.Header().Get("Content-Type") != "application/problem+json" {
				t.Fatalf("not a problem: %v %s", err, w.Body)
			}
			if k == domain.KindInternal {
				if p.Code != "server.internal" || p.Detail != "internal error" || len(p.Errors) != 0 {
					t.Fatalf("internal error leaks: %s", w.Body)
				}
			} else if p.Code != "test.failure" || p.Detail != "it failed" || len(p.Errors) != 1 || p.Errors[0].Location != "body.x" {
				t.Fatalf("problem = %s", w.Body)
			}
			if p.RequestID == "" || p.RequestID != w.Header().Get(edge.RequestIDHeader) {
				t.Fatalf("requestId %q, header %q", p.RequestID, w.Header().Get(edge.RequestIDHeader))
			}
			if strings.Contains(w.Body.String(), "unexpected EOF") {
				t.Fatal("the cause was sent to the client")
			}

			w = serve(s, http.MethodGet, "/api/auth/test/fail/"+k.String(), "")
			var fe map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &fe); err != nil || w.Code != edge.StatusFor(k) {
				t.Fatalf("framework: %d %s", w.Code, w.Body)
			}
			if len(fe) != 2 || fe["message"] == nil || fe["code"] == nil {
				t.Fatalf("framework body is not {message, code}: %s", w.Body)
			}
		})
	}
	if !strings.Contains(logs.String(), "unexpected EOF") {
		t.Fatal("the cause was not logged")
	}
}

func TestErrors_validation_names_each_malformed_part(t *testing.T) {
	s, _ := newTestServer(t)
	addErrorRoutes(s)
	secret := "hunter2-secret-value"
	tests := []struct {
		name, path, body string
		locations        []string
	}{
		{"query_out_of_range", "/api/test/echo?limit=500", `{"hostname":"a","count":1}`, []string{"query.limit"}},
		{"query_not_a_number", "/api/test/echo?limit=" + secret, `{"hostname":"a","count":1}`, []string{"query.limit"}},
		{"body_field_too_long", "/api/test/echo", `{"hostname":"` + secret + secret + `","count":1}`, []string{"body.hostname"}},
		{"body_field_wrong_type", "/api/test/echo", `{"hostname":"a","count":"` + secret + `"}`, []string{"body.count"}},
		{"body_unknown_field", "/api/test/echo", `{"hostname":"a","count":1,"password":"` + secret + `"}`, []string{"body.password"}},
		{"body_two_problems", "/api/test/echo?limit=0", `{"hostname":"` + secret + secret + `","count":-1}`, []string{"query.limit", "body.hostname", "body.count"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := serve(s, http.MethodPost, tt.path, tt.body)
			if w.Code != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400: %s", w.Code, w.Body)
			}
			if strings.Contains(w.Body.String(), secret) {
				t.Fatalf("the submitted value was echoed: %s", w.Body)
			}
			var p edge.Problem
			_ = json.Unmarshal(w.Body.Bytes(), &p)
			if p.Code != "request.invalid" {
				t.Fatalf("code = %q", p.Code)
			}
			got := map[string]bool{}
			for _, e := range p.Errors {
				got[e.Location] = true
			}
			for _, loc := range tt.locations {
				if !got[loc] {
					t.Fatalf("errors %+v do not name %s", p.Errors, loc)
				}
			}
		})
	}
	t.Run("framework_shape", func(t *testing.T) {
		w := serve(s, http.MethodPost, "/api/auth/test/echo?limit=500", `{"hostname":"a","count":"x"}`)
		var fe edge.FrameworkError
		_ = json.Unmarshal(w.Body.Bytes(), &fe)
		if w.Code != 400 || fe.Code != "VALIDATION_ERROR" || !strings.Contains(fe.Message, "[query.limit]") || !strings.Contains(fe.Message, "[body.count]") {
			t.Fatalf("framework validation = %d %s", w.Code, w.Body)
		}
	})
	t.Run("malformed_json", func(t *testing.T) {
		w := serve(s, http.MethodPost, "/api/auth/test/echo", `{"hostname":`)
		var fe edge.FrameworkError
		_ = json.Unmarshal(w.Body.Bytes(), &fe)
		if w.Code != 400 || fe.Code != "BAD_REQUEST" {
			t.Fatalf("framework malformed JSON = %d %s", w.Code, w.Body)
		}
		w = serve(s, http.MethodPost, "/api/test/echo", `{"hostname":`)
		if w.Code != 400 || !strings.Contains(w.Body.String(), `"location":"body"`) {
			t.Fatalf("problem malformed JSON = %d %s", w.Code, w.Body)
		}
	})
}

func TestErrors_panic_is_a_500_without_internals(t *testing.T) {
	s, logs := newTestServer(t)
	addErrorRoutes(s)
	w := serve(s, http.MethodGet, "/api/test/fail/panic", "")
	if w.Code != 500 || strings.Contains(w.Body.String(), "secret panic detail") {
		t.Fatalf("panic answer = %d %s", w.Code, w.Body)
	}
	var p edge.Problem
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Code != "server.internal" || p.RequestID == "" {
		t.Fatalf("panic body = %s", w.Body)
	}
	if !strings.Contains(logs.String(), "secret panic detail") || !strings.Contains(logs.String(), p.RequestID) {
		t.Fatalf("panic not logged with its request id:\n%s", logs)
	}
	// The server keeps serving.
	if w := serve(s, http.MethodGet, "/api/auth/ok", ""); w.Code != 200 {
		t.Fatalf("after a panic /ok = %d", w.Code)
	}
}

// Ensure every 503 says when to try again, whoever renders it (a Huma
// handler on either contract, or a middleware), and other errors do not.
func TestErrors_unavailable_carries_retry_after(t *testing.T) {
	s, _ := newTestServer(t)
	addErrorRoutes(s)
	for _, path := range []string{"/api/test/fail/", "/api/auth/test/fail/"} {
		w := serve(s, http.MethodGet, path+domain.KindUnavailable.String(), "")
		if got, want := w.Code, http.StatusServiceUnavailable; got != want {
			t.Fatalf("%s: status = %d, want %d", path, got, want)
		}
		if got, want := w.Header().Get("Retry-After"), "5"; got != want {
			t.Fatalf("%s: Retry-After = %q, want %q", path, got, want)
		}
		if w := serve(s, http.MethodGet, path+domain.KindConflict.String(), ""); w.Header().Get("Retry-After") != "" {
			t.Fatalf("%s: a 409 has Retry-After %q", path, w.Header().Get("Retry-After"))
		}
	}

	w := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(w)
	c.Request = httptest.NewRequest(http.MethodGet, "/api/auth/get-session", nil)
	s.AbortWithError(c, &domain.Error{Kind: domain.KindUnavailable, Code: "database.unavailable", Message: "the database is unavailable"})
	if got, want := w.Code, http.StatusServiceUnavailable; got != want {
		t.Fatalf("middleware: status = %d, want %d", got, want)
	}
	if got, want := w.Header().Get("Retry-After"), "5"; got != want {
		t.Fatalf("middleware: Retry-After = %q, want %q", got, want)
	}
}

// Ensure a request its client cancelled, whose work stopped on that
// cancellation, is logged as such at info, not as a server error.
func TestErrors_client_cancellation_is_not_a_server_error(t *testing.T) {
	s, logs := newTestServer(t)
	cancelled := func(ctx context.Context, _ *struct{}) (*emptyOutput, error) {
		return nil, &domain.Error{Kind: domain.KindUnavailable, Code: "database.unavailable", Message: "the database is unavailable",
			Err: fmt.Errorf("gormstore: sessions.get: %w", ctx.Err())}
	}
	register(s, edge.ContractFramework, huma.Operation{OperationID: "cancelled", Method: http.MethodGet, Path: "/api/auth/test/cancelled"}, cancelled)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest(http.MethodGet, "/api/auth/test/cancelled", nil).WithContext(ctx)
	s.ServeHTTP(httptest.NewRecorder(), req)

	var found bool
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var entry struct {
			Level, Msg string
		}
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("log line is not JSON: %s", line)
		}
		if entry.Level == "ERROR" {
			t.Fatalf("a cancelled request logged an error: %s", line)
		}
		found = found || entry.Level+" "+entry.Msg == "INFO request cancelled by the client"
	}
	if !found {
		t.Fatalf("no info line says the client cancelled:\n%s", logs)
	}
}

// TestContractCodes: each contract answers a neutral code in its own
// vocabulary, the Words its routes declare: Better Auth's code (and
// its status where the wire fixes one) on the framework, the problem code
// elsewhere; a neutral code a contract has no entry for answers the
// framework's code for its status, and itself as a problem code.
func TestContractCodes(t *testing.T) {
	fw := edge.ContextWithPolicy(context.Background(), &edge.Policy{Shape: edge.ShapeFramework, Words: framework.Words})
	problem := edge.ContextWithPolicy(context.Background(), &edge.Policy{Shape: edge.ShapeProblem, Words: edge.ProblemWords})
	for _, tt := range []struct {
		err           error
		wire          string
		wireStatus    int
		problemCode   string
		problemStatus int
	}{
		{domain.Invalid("organization.invalid_slug", "Invalid slug"), "INVALID_SLUG", 400, "request.invalid_slug", 400},
		{domain.Invalid("email.invisible_characters", "Invalid email"), "INVALID_EMAIL", 400, "email.invisible_characters", 400},
		{domain.NewError(domain.KindConflict, "user.email_exists", "taken"), "USER_ALREADY_EXISTS_USE_ANOTHER_EMAIL", 422, "request.user_already_exists_use_another_email", 409},
		// One wire code, three conditions, three statuses.
		{domain.Invalid("password_reset.invalid_token", "Invalid token"), "INVALID_TOKEN", 400, "request.invalid_token", 400},
		{domain.NewError(domain.KindUnauthenticated, "verification.invalid_token", "Invalid token"), "INVALID_TOKEN", 401, "request.invalid_token", 401},
		{domain.NewError(domain.KindNotFound, "account_deletion.invalid_token", "Invalid token"), "INVALID_TOKEN", 404, "request.invalid_token", 404},
		{domain.NotFound("organization.member_not_found", "Member"), "NOT_FOUND", 404, "organization.member_not_found", 404},
	} {
		f, ok := edge.RenderError(fw, slog.New(slog.DiscardHandler), tt.err).(*edge.FrameworkError)
		if !ok || f.Code != tt.wire || f.GetStatus() != tt.wireStatus {
			t.Errorf("framework answer to %v = %+v, want %s %d", tt.err, f, tt.wire, tt.wireStatus)
		}
		p, ok := edge.RenderError(problem, slog.New(slog.DiscardHandler), tt.err).(*edge.Problem)
		if !ok || p.Code != tt.problemCode || p.Status != tt.problemStatus {
			t.Errorf("problem answer to %v = %+v, want %s %d", tt.err, p, tt.problemCode, tt.problemStatus)
		}
	}
}
