package command_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/application/command"
	"github.com/gatehouse/gatehouse/domain"
)

// keyReq is a request of the service key "key-1" holding scopes.
func keyReq(scopes ...domain.Scope) command.TrustedRequest {
	k := domain.RehydrateServiceKey("key-1", "backend", scopes, "abcd", "cli",
		time.Time{}, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Time{}, time.Time{})
	return command.TrustedRequest{Key: k, RequestID: "req-1", IPAddress: "203.0.113.9"}
}

// mustField fails unless err has code and names field.
func mustField(t *testing.T, err error, code, field string) {
	t.Helper()
	mustCode(t, err, code)
	var de *domain.Error
	errors.As(err, &de)
	for _, f := range de.Fields {
		if f.Field == field {
			return
		}
	}
	t.Fatalf("err %v names %v, want %s", err, de.Fields, field)
}

// Ensure each user use case a trusted backend calls lets a service key with
// the operation's scope (or *) through and refuses one without it, as
// Forbidden auth.insufficient_scope; platform roles are for administrators.
func TestAdministration_service_key_scopes(t *testing.T) {
	r, w := domain.ScopeUsersRead, domain.ScopeUsersWrite
	tests := []struct {
		name  string
		scope domain.Scope
		run   func(t *testing.T, a *command.Administration, req command.Caller, id domain.UserID) error
	}{
		{"create", w, func(t *testing.T, a *command.Administration, req command.Caller, _ domain.UserID) error {
			_, err := a.CreateUser(t.Context(), req, command.CreateUser{Email: "bob@example.com", Name: "Bob"})
			return err
		}},
		{"get", r, func(t *testing.T, a *command.Administration, req command.Caller, id domain.UserID) error {
			_, err := a.GetUser(t.Context(), req, id)
			return err
		}},
		{"page", r, func(t *testing.T, a *command.Administration, req command.Caller, _ domain.UserID) error {
			_, err := a.PageUsers(t.Context(), req, command.ListUsersPage{})
			return err
		}},
		{"update", w, func(t *testing.T, a *command.Administration, req command.Caller, id domain.UserID) error {
			name := "Ada L."
			_, err := a.UpdateUser(t.Context(), req, id, command.AdminUserPatch{Name: &name})
			return err
		}},
		{"ban", w, func(t *testing.T, a *command.Administration, req command.Caller, id domain.UserID) error {
			_, err := a.BanUser(t.Context(), req, id, "spam", 0)
			return err
		}},
		{"unban", w, func(t *testing.T, a *command.Administration, req command.Caller, id domain.UserID) error {
			_, err := a.UnbanUser(t.Context(), req, id)
			return err
		}},
		{"revoke_sessions", w, func(t *testing.T, a *command.Administration, req command.Caller, id domain.UserID) error {
			return a.RevokeUserSessions(t.Context(), req, id)
		}},
		{"set_password", w, func(t *testing.T, a *command.Administration, req command.Caller, id domain.UserID) error {
			return a.SetUserPassword(t.Context(), req, id, "a long new password")
		}},
		{"delete", w, func(t *testing.T, a *command.Administration, req command.Caller, id domain.UserID) error {
			return a.RemoveUser(t.Context(), req, id)
		}},
	}
	for _, tt := range tests {
		other := r
		if tt.scope == r {
			other = w
		}
		for _, c := range []struct {
			name   string
			scopes []domain.Scope
			code   string
		}{
			{"with_its_scope", []domain.Scope{tt.scope}, ""},
			{"with_every_scope", []domain.Scope{domain.ScopeAll}, ""},
			{"without_its_scope", []domain.Scope{other, domain.ScopeOrganizationsWrite}, "auth.insufficient_scope"},
		} {
			t.Run(tt.name+"/"+c.name, func(t *testing.T) {
				aw := newAdminWorld(t)
				u, err := aw.admin.CreateUser(t.Context(), keyReq(domain.ScopeAll), command.CreateUser{Email: "ada@example.com", Name: "Ada"})
				if err != nil {
					t.Fatal(err)
				}
				err = tt.run(t, aw.admin, keyReq(c.scopes...), u.ID())
				if c.code == "" {
					if err != nil {
						t.Fatalf("err = %v, want success", err)
					}
					return
				}
				mustFail(t, err, domain.KindForbidden, c.code)
			})
		}
	}
	t.Run("roles_need_an_administrator", func(t *testing.T) {
		aw := newAdminWorld(t)
		_, err := aw.admin.CreateUser(t.Context(), keyReq(domain.ScopeAll), command.CreateUser{Email: "bob@example.com", Name: "Bob",
			Roles: []domain.PlatformRole{domain.PlatformRoleAdmin}})
		mustFail(t, err, domain.KindForbidden, "auth.insufficient_scope")
	})
}

// Ensure the user use cases answer a service key with the neutral
// conditions they answer an administrator (the trusted API words them), and
// audit its writes with the key as the actor under the trusted API's action
// names.
func TestAdministration_service_key_rules(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, w *adminWorld, req command.TrustedRequest, id domain.UserID)
	}{
		{"metadata_is_checked_and_the_refusal_audited", func(t *testing.T, w *adminWorld, req command.TrustedRequest, _ domain.UserID) {
			_, err := w.admin.CreateUser(t.Context(), req, command.CreateUser{Email: "x@example.com", Name: "X",
				PrivateMetadata: []byte(`{"k":"` + strings.Repeat("x", domain.MaxMetadataBytes) + `"}`)})
			mustField(t, err, "user.invalid_metadata", "privateMetadata")
			es := w.entries(t, "users.create") // newest first, after the setup's creation
			if len(es) != 2 || es[1].Outcome != domain.OutcomeSuccess || es[0].Outcome != domain.OutcomeFailure || es[0].Code != "user.invalid_metadata" ||
				es[0].ActorType != domain.ActorServiceKey || es[0].ActorID != "key-1" || es[0].RequestID != "req-1" || es[0].IPAddress != "203.0.113.9" {
				t.Fatalf("audit = %+v", es)
			}
		}},
		{"metadata_is_stored", func(t *testing.T, w *adminWorld, req command.TrustedRequest, id domain.UserID) {
			u, err := w.admin.UpdateUser(t.Context(), req, id, command.AdminUserPatch{PublicMetadata: []byte(`{"plan":"pro"}`)})
			if err != nil || string(u.Metadata().Public.JSON()) != `{"plan":"pro"}` {
				t.Fatalf("UpdateUser = %+v, %v", u, err)
			}
		}},
		{"taken_address_is_a_conflict", func(t *testing.T, w *adminWorld, req command.TrustedRequest, _ domain.UserID) {
			_, err := w.admin.CreateUser(t.Context(), req, command.CreateUser{Email: "ADA@example.com", Name: "Ada"})
			mustFail(t, err, domain.KindConflict, "user.email_exists")
		}},
		{"unknown_user_is_not_found", func(t *testing.T, w *adminWorld, req command.TrustedRequest, _ domain.UserID) {
			name := "X"
			_, err := w.admin.UpdateUser(t.Context(), req, "nobody", command.AdminUserPatch{Name: &name})
			mustFail(t, err, domain.KindNotFound, "admin.user_not_found")
			err = w.admin.RemoveUser(t.Context(), req, "nobody")
			mustFail(t, err, domain.KindNotFound, "admin.user_not_found")
			if es := w.entries(t, "users.delete"); len(es) != 1 || es[0].Code != "admin.user_not_found" {
				t.Fatalf("audit = %+v", es)
			}
		}},
		{"empty_patch_is_refused", func(t *testing.T, w *adminWorld, req command.TrustedRequest, id domain.UserID) {
			_, err := w.admin.UpdateUser(t.Context(), req, id, command.AdminUserPatch{})
			mustFail(t, err, domain.KindInvalid, "admin.no_data_to_update")
		}},
		{"ban_refusals_name_the_field", func(t *testing.T, w *adminWorld, req command.TrustedRequest, id domain.UserID) {
			_, err := w.admin.BanUser(t.Context(), req, id, strings.Repeat("é", domain.MaxBanReasonLength+1), 0)
			mustField(t, err, "user.invalid_ban_reason", "banReason")
			u, err := w.admin.BanUser(t.Context(), req, id, "spam", time.Hour)
			if err != nil || !u.Access().Banned || !u.Access().BanExpires.Equal(u.UpdatedAt().Add(time.Hour)) {
				t.Fatalf("BanUser = %+v, %v", u, err)
			}
			if es := w.entries(t, "users.ban"); len(es) != 2 || es[0].ActorType != domain.ActorServiceKey {
				t.Fatalf("audit = %+v", es)
			}
		}},
		{"listing_checks_its_query", func(t *testing.T, w *adminWorld, req command.TrustedRequest, _ domain.UserID) {
			for _, tt := range []struct {
				q           command.ListUsersPage
				code, field string
			}{
				{command.ListUsersPage{Limit: 101}, "paging.invalid_limit", "limit"},
				{command.ListUsersPage{Limit: -1}, "paging.invalid_limit", "limit"},
				{command.ListUsersPage{Cursor: "!!"}, "paging.invalid_cursor", "cursor"},
				{command.ListUsersPage{Email: "nope"}, "user.invalid_email_filter", "email"},
			} {
				_, err := w.admin.PageUsers(t.Context(), req, tt.q)
				mustField(t, err, tt.code, tt.field)
			}
			page, err := w.admin.PageUsers(t.Context(), req, command.ListUsersPage{Email: " ADA@Example.com "})
			if err != nil || len(page.Users) != 1 || page.Users[0].Email() != "ada@example.com" || page.NextCursor != "" {
				t.Fatalf("email lookup = %+v, %v", page, err)
			}
		}},
		{"default_page_is_20", func(t *testing.T, w *adminWorld, req command.TrustedRequest, _ domain.UserID) {
			for i := range 21 {
				w.clock.Advance(time.Second)
				if _, err := w.admin.CreateUser(t.Context(), req, command.CreateUser{Email: "u" + strings.Repeat("x", i) + "@example.com", Name: "U"}); err != nil {
					t.Fatal(err)
				}
			}
			page, err := w.admin.PageUsers(t.Context(), req, command.ListUsersPage{})
			if err != nil || len(page.Users) != command.DefaultUsersPageLimit || page.NextCursor == "" {
				t.Fatalf("default page = %d users, next %q, %v", len(page.Users), page.NextCursor, err)
			}
			rest, err := w.admin.PageUsers(t.Context(), req, command.ListUsersPage{Cursor: page.NextCursor})
			if err != nil || len(rest.Users) != 2 || rest.NextCursor != "" || rest.Users[1].Email() != "ada@example.com" {
				t.Fatalf("second page = %+v, %v", rest, err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newAdminWorld(t)
			req := keyReq(domain.ScopeUsersRead, domain.ScopeUsersWrite)
			u, err := w.admin.CreateUser(t.Context(), req, command.CreateUser{Email: "ada@example.com", Name: "Ada"})
			if err != nil {
				t.Fatal(err)
			}
			tt.run(t, w, req, u.ID())
		})
	}
}
