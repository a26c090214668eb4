package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

func TestNewEmail(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"lower_cases_and_trims", "  Ada@Example.COM ", "ada@example.com", true},
		{"plus_addressing", "ada+x@example.com", "ada+x@example.com", true},
		{"rejects_display_name", "Ada <ada@example.com>", "", false},
		{"rejects_missing_at", "ada.example.com", "", false},
		{"rejects_dotless_host", "ada@localhost", "", false},
		{"rejects_empty", "", "", false},
		{"rejects_overlong", strings.Repeat("a", 250) + "@example.com", "", false},
		{"rejects_overlong_local_part", strings.Repeat("a", 65) + "@example.com", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := domain.NewEmail(tt.in)
			if tt.ok != (err == nil) {
				t.Fatalf("NewEmail(%q) error = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if err != nil && !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("error kind = %v, want invalid", domain.KindOf(err))
			}
			if string(got) != tt.want {
				t.Fatalf("NewEmail(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNewUser_validates_name(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"trims", "  Ada  ", true},
		{"rejects_blank", "   ", false},
		{"rejects_overlong", strings.Repeat("é", domain.MaxNameLength+1), false},
		{"accepts_max_length_in_characters", strings.Repeat("é", domain.MaxNameLength), true},
		{"rejects_invalid_utf8", "\xff\xfe", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := domain.NewUser("u1", tt.in, "ada@example.com", now)
			if tt.ok != (err == nil) {
				t.Fatalf("NewUser(name=%q) error = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if err == nil && u.Name() != strings.TrimSpace(tt.in) {
				t.Fatalf("Name() = %q", u.Name())
			}
			if err != nil {
				var de *domain.Error
				if !errors.As(err, &de) || len(de.Fields) == 0 || de.Fields[0].Location != "body.name" {
					t.Fatalf("error does not name body.name: %#v", err)
				}
			}
		})
	}
}

func TestUser_changes_move_updated_at(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	u, err := domain.NewUser("u1", "Ada", "ada@example.com", t0)
	if err != nil {
		t.Fatal(err)
	}
	t1 := t0.Add(time.Minute)
	u.MarkEmailVerified(t1)
	if !u.EmailVerified() || !u.UpdatedAt().Equal(t1) || !u.CreatedAt().Equal(t0) {
		t.Fatalf("verified=%v updated=%v created=%v", u.EmailVerified(), u.UpdatedAt(), u.CreatedAt())
	}
}
