package command_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/application/command"
	"github.com/gatehouse/gatehouse/domain"
)

// trustedReq is a request of the service key "key-1".
func trustedReq() command.TrustedRequest {
	k := domain.RehydrateServiceKey("key-1", "backend", []domain.Scope{domain.ScopeAll}, "abcd", "cli",
		time.Time{}, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Time{}, time.Time{})
	return command.TrustedRequest{Key: k, RequestID: "req-1", IPAddress: "203.0.113.9"}
}

// mustField fails unless err is invalid with code and names location.
func mustField(t *testing.T, err error, code, location string) {
	t.Helper()
	mustCode(t, err, code)
	var de *domain.Error
	errors.As(err, &de)
	for _, f := range de.Fields {
		if f.Field == location {
			return
		}
	}
	t.Fatalf("err %v names %v, want %s", err, de.Fields, location)
}

func TestBackendUsers_rules(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, w *adminWorld, b *command.BackendUsers, id domain.UserID)
	}{
		{"metadata_is_checked_and_the_refusal_audited", func(t *testing.T, w *adminWorld, b *command.BackendUsers, _ domain.UserID) {
			_, err := b.Create(t.Context(), trustedReq(), command.CreateBackendUser{Email: "x@example.com", Name: "X",
				PrivateMetadata: []byte(`{"k":"` + strings.Repeat("x", domain.MaxMetadataBytes) + `"}`)})
			mustField(t, err, "user.invalid_metadata", "privateMetadata")
			es := w.entries(t, "users.create") // newest first, after the setup's creation
			if len(es) != 2 || es[1].Outcome != domain.OutcomeSuccess || es[0].Outcome != domain.OutcomeFailure || es[0].Code != "user.invalid_metadata" ||
				es[0].ActorType != domain.ActorServiceKey || es[0].ActorID != "key-1" || es[0].RequestID != "req-1" || es[0].IPAddress != "203.0.113.9" {
				t.Fatalf("audit = %+v", es)
			}
		}},
		{"taken_address_is_email_taken", func(t *testing.T, _ *adminWorld, b *command.BackendUsers, _ domain.UserID) {
			_, err := b.Create(t.Context(), trustedReq(), command.CreateBackendUser{Email: "ADA@example.com", Name: "Ada"})
			mustField(t, err, "user.email_taken", "email")
			_, err = b.Update(t.Context(), trustedReq(), "nobody", command.BackendUserPatch{Name: new(string)})
			mustCode(t, err, "user.not_found")
		}},
		{"empty_patch_is_no_changes", func(t *testing.T, _ *adminWorld, b *command.BackendUsers, id domain.UserID) {
			_, err := b.Update(t.Context(), trustedReq(), id, command.BackendUserPatch{})
			mustField(t, err, "user.no_changes", "")
		}},
		{"ban_refusals_name_the_trusted_fields", func(t *testing.T, _ *adminWorld, b *command.BackendUsers, id domain.UserID) {
			_, err := b.Ban(t.Context(), trustedReq(), id, strings.Repeat("é", domain.MaxBanReasonLength+1), 0)
			mustField(t, err, "user.invalid_ban_reason", "reason")
			u, err := b.Ban(t.Context(), trustedReq(), id, "spam", time.Hour)
			if err != nil || !u.Access().Banned || !u.Access().BanExpires.Equal(u.UpdatedAt().Add(time.Hour)) {
				t.Fatalf("Ban = %+v, %v", u, err)
			}
		}},
		{"listing_checks_its_query", func(t *testing.T, _ *adminWorld, b *command.BackendUsers, _ domain.UserID) {
			for _, tt := range []struct {
				q              command.ListBackendUsers
				code, location string
			}{
				{command.ListBackendUsers{Limit: 101}, "request.invalid_limit", "limit"},
				{command.ListBackendUsers{Limit: -1}, "request.invalid_limit", "limit"},
				{command.ListBackendUsers{Cursor: "!!"}, "request.invalid_cursor", "cursor"},
				{command.ListBackendUsers{Email: "nope"}, "request.invalid_email", "email"},
			} {
				_, err := b.List(t.Context(), trustedReq(), tt.q)
				mustField(t, err, tt.code, tt.location)
			}
			page, err := b.List(t.Context(), trustedReq(), command.ListBackendUsers{Email: " ADA@Example.com "})
			if err != nil || len(page.Users) != 1 || page.Users[0].Email() != "ada@example.com" || page.NextCursor != "" {
				t.Fatalf("email lookup = %+v, %v", page, err)
			}
		}},
		{"default_page_is_20", func(t *testing.T, w *adminWorld, b *command.BackendUsers, _ domain.UserID) {
			for i := range 21 {
				w.clock.Advance(time.Second)
				if _, err := b.Create(t.Context(), trustedReq(), command.CreateBackendUser{Email: "u" + strings.Repeat("x", i) + "@example.com", Name: "U"}); err != nil {
					t.Fatal(err)
				}
			}
			page, err := b.List(t.Context(), trustedReq(), command.ListBackendUsers{})
			if err != nil || len(page.Users) != command.DefaultBackendUserLimit || page.NextCursor == "" {
				t.Fatalf("default page = %d users, next %q, %v", len(page.Users), page.NextCursor, err)
			}
			rest, err := b.List(t.Context(), trustedReq(), command.ListBackendUsers{Cursor: page.NextCursor})
			if err != nil || len(rest.Users) != 2 || rest.NextCursor != "" || rest.Users[1].Email() != "ada@example.com" {
				t.Fatalf("second page = %+v, %v", rest, err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newAdminWorld(t)
			b := command.NewBackendUsers(w.admin)
			u, err := b.Create(t.Context(), trustedReq(), command.CreateBackendUser{Email: "ada@example.com", Name: "Ada"})
			if err != nil {
				t.Fatal(err)
			}
			tt.run(t, w, b, u.ID())
		})
	}
}
