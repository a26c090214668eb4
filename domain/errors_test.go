package domain_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gatehouse/gatehouse/domain"
)

func TestError_is_matches_kind_through_wrapping(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", domain.NotFound("user.not_found", "user"))
	if !errors.Is(err, domain.ErrNotFound) {
		t.Fatal("errors.Is(wrapped not-found, ErrNotFound) = false")
	}
	if errors.Is(err, domain.ErrConflict) {
		t.Fatal("a not-found error matched ErrConflict")
	}
	if !errors.Is(err, &domain.Error{Kind: domain.KindNotFound, Code: "user.not_found"}) {
		t.Fatal("code-specific sentinel did not match")
	}
	if errors.Is(err, &domain.Error{Kind: domain.KindNotFound, Code: "domain.not_found"}) {
		t.Fatal("a different code matched")
	}
}

func TestKindOf_unknown_errors_are_internal(t *testing.T) {
	if got := domain.KindOf(errors.New("boom")); got != domain.KindInternal {
		t.Fatalf("KindOf(plain error) = %v, want internal", got)
	}
	if got := domain.KindOf(nil); got != domain.KindInternal {
		t.Fatalf("KindOf(nil) = %v, want internal", got)
	}
	if got := domain.KindOf(fmt.Errorf("x: %w", domain.ErrForbidden)); got != domain.KindForbidden {
		t.Fatalf("KindOf(wrapped forbidden) = %v", got)
	}
}

func TestError_message_hides_nothing_from_logs(t *testing.T) {
	cause := errors.New("dial tcp: refused")
	err := domain.Internal("users.get", cause)
	if !errors.Is(err, cause) {
		t.Fatal("cause not reachable through Unwrap")
	}
	if got := err.Error(); got != "server.internal: internal error: users.get: dial tcp: refused" {
		t.Fatalf("Error() = %q", got)
	}
}

func TestKinds_have_distinct_names(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range domain.Kinds {
		if seen[k.String()] {
			t.Fatalf("duplicate kind name %q", k)
		}
		seen[k.String()] = true
	}
}
