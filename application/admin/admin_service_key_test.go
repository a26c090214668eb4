package admin_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// Ensure each user use case a trusted backend calls lets a service key with
// the operation's scope (or *) through and refuses one without it, as
// Forbidden auth.insufficient_scope; platform roles are for administrators.
func TestAdministration_service_key_scopes(t *testing.T) {
	r, w := domain.ScopeUsersRead, domain.ScopeUsersWrite
	tests := []struct {
		name  string
		scope domain.Scope
		run   func(t *testing.T, a *admin.Administration, req usecase.Caller, id domain.UserID) error
	}{
		{"create", w, func(t *testing.T, a *admin.Administration, req usecase.Caller, _ domain.UserID) error {
			_, err := a.CreateUser(t.Context(), req, admin.CreateUser{Email: "bob@example.com", Name: "Bob"})
			return err
		}},
		{"get", r, func(t *testing.T, a *admin.Administration, req usecase.Caller, id domain.UserID) error {
			_, err := a.GetUser(t.Context(), req, id)
			return err
		}},
		{"page", r, func(t *testing.T, a *admin.Administration, req usecase.Caller, _ domain.UserID) error {
			_, err := a.PageUsers(t.Context(), req, admin.ListUsersPage{})
			return err
		}},
		{"update", w, func(t *testing.T, a *admin.Administration, req usecase.Caller, id domain.UserID) error {
			name := "Ada L."
			_, err := a.UpdateUser(t.Context(), req, id, admin.AdminUserPatch{Name: &name})
			return err
		}},
		{"ban", w, func(t *testing.T, a *admin.Administration, req usecase.Caller, id domain.UserID) error {
			_, err := a.BanUser(t.Context(), req, id, "spam", 0)
			return err
		}},
		{"unban", w, func(t *testing.T, a *admin.Administration, req usecase.Caller, id domain.UserID) error {
			_, err := a.UnbanUser(t.Context(), req, id)
			return err
		}},
		{"revoke_sessions", w, func(t *testing.T, a *admin.Administration, req usecase.Caller, id domain.UserID) error {
			return a.RevokeUserSessions(t.Context(), req, id)
		}},
		{"set_password", w, func(t *testing.T, a *admin.Administration, req usecase.Caller, id domain.UserID) error {
			return a.SetUserPassword(t.Context(), req, id, "a long new password")
		}},
		{"delete", w, func(t *testing.T, a *admin.Administration, req usecase.Caller, id domain.UserID) error {
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
				aw := usecasetest.NewAdminWorld(t)
				u, err := aw.Admin.CreateUser(t.Context(), usecasetest.KeyReq(domain.ScopeAll), admin.CreateUser{Email: "ada@example.com", Name: "Ada"})
				if err != nil {
					t.Fatal(err)
				}
				err = tt.run(t, aw.Admin, usecasetest.KeyReq(c.scopes...), u.ID())
				if c.code == "" {
					if err != nil {
						t.Fatalf("err = %v, want success", err)
					}
					return
				}
				usecasetest.MustFail(t, err, domain.KindForbidden, c.code)
			})
		}
	}
	t.Run("roles_need_an_administrator", func(t *testing.T) {
		aw := usecasetest.NewAdminWorld(t)
		_, err := aw.Admin.CreateUser(t.Context(), usecasetest.KeyReq(domain.ScopeAll), admin.CreateUser{Email: "bob@example.com", Name: "Bob",
			Roles: []domain.PlatformRole{domain.PlatformRoleAdmin}})
		usecasetest.MustFail(t, err, domain.KindForbidden, "auth.insufficient_scope")
	})
}

// Ensure the user use cases answer a service key with the neutral
// conditions they answer an administrator (the trusted API words them), and
// audit its writes with the key as the actor under the trusted API's action
// names.
func TestAdministration_service_key_rules(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, w *usecasetest.AdminWorld, req usecase.TrustedRequest, id domain.UserID)
	}{
		{"metadata_is_checked_and_the_refusal_audited", func(t *testing.T, w *usecasetest.AdminWorld, req usecase.TrustedRequest, _ domain.UserID) {
			_, err := w.Admin.CreateUser(t.Context(), req, admin.CreateUser{Email: "x@example.com", Name: "X",
				PrivateMetadata: []byte(`{"k":"` + strings.Repeat("x", domain.MaxMetadataBytes) + `"}`)})
			usecasetest.MustField(t, err, "user.invalid_metadata", "privateMetadata")
			es := w.Entries(t, "users.create") // newest first, after the setup's creation
			if len(es) != 2 || es[1].Outcome != domain.OutcomeSuccess || es[0].Outcome != domain.OutcomeFailure || es[0].Code != "user.invalid_metadata" ||
				es[0].ActorType != domain.ActorServiceKey || es[0].ActorID != "key-1" || es[0].RequestID != "req-1" || es[0].IPAddress != "203.0.113.9" {
				t.Fatalf("audit = %+v", es)
			}
		}},
		{"metadata_is_stored", func(t *testing.T, w *usecasetest.AdminWorld, req usecase.TrustedRequest, id domain.UserID) {
			u, err := w.Admin.UpdateUser(t.Context(), req, id, admin.AdminUserPatch{PublicMetadata: []byte(`{"plan":"pro"}`)})
			if err != nil || string(u.Metadata().Public.JSON()) != `{"plan":"pro"}` {
				t.Fatalf("UpdateUser = %+v, %v", u, err)
			}
		}},
		{"taken_address_is_a_conflict", func(t *testing.T, w *usecasetest.AdminWorld, req usecase.TrustedRequest, _ domain.UserID) {
			_, err := w.Admin.CreateUser(t.Context(), req, admin.CreateUser{Email: "ADA@example.com", Name: "Ada"})
			usecasetest.MustFail(t, err, domain.KindConflict, "user.email_exists")
		}},
		{"unknown_user_is_not_found", func(t *testing.T, w *usecasetest.AdminWorld, req usecase.TrustedRequest, _ domain.UserID) {
			name := "X"
			_, err := w.Admin.UpdateUser(t.Context(), req, "nobody", admin.AdminUserPatch{Name: &name})
			usecasetest.MustFail(t, err, domain.KindNotFound, "admin.user_not_found")
			err = w.Admin.RemoveUser(t.Context(), req, "nobody")
			usecasetest.MustFail(t, err, domain.KindNotFound, "admin.user_not_found")
			if es := w.Entries(t, "users.delete"); len(es) != 1 || es[0].Code != "admin.user_not_found" {
				t.Fatalf("audit = %+v", es)
			}
		}},
		{"empty_patch_is_refused", func(t *testing.T, w *usecasetest.AdminWorld, req usecase.TrustedRequest, id domain.UserID) {
			_, err := w.Admin.UpdateUser(t.Context(), req, id, admin.AdminUserPatch{})
			usecasetest.MustFail(t, err, domain.KindInvalid, "admin.no_data_to_update")
		}},
		{"ban_refusals_name_the_field", func(t *testing.T, w *usecasetest.AdminWorld, req usecase.TrustedRequest, id domain.UserID) {
			_, err := w.Admin.BanUser(t.Context(), req, id, strings.Repeat("é", domain.MaxBanReasonLength+1), 0)
			usecasetest.MustField(t, err, "user.invalid_ban_reason", "banReason")
			u, err := w.Admin.BanUser(t.Context(), req, id, "spam", time.Hour)
			if err != nil || !u.Access().Banned || !u.Access().BanExpires.Equal(u.UpdatedAt().Add(time.Hour)) {
				t.Fatalf("BanUser = %+v, %v", u, err)
			}
			if es := w.Entries(t, "users.ban"); len(es) != 2 || es[0].ActorType != domain.ActorServiceKey {
				t.Fatalf("audit = %+v", es)
			}
		}},
		{"listing_checks_its_query", func(t *testing.T, w *usecasetest.AdminWorld, req usecase.TrustedRequest, _ domain.UserID) {
			for _, tt := range []struct {
				q           admin.ListUsersPage
				code, field string
			}{
				{admin.ListUsersPage{Limit: 101}, "paging.invalid_limit", "limit"},
				{admin.ListUsersPage{Limit: -1}, "paging.invalid_limit", "limit"},
				{admin.ListUsersPage{Cursor: "!!"}, "paging.invalid_cursor", "cursor"},
				{admin.ListUsersPage{Email: "nope"}, "user.invalid_email_filter", "email"},
			} {
				_, err := w.Admin.PageUsers(t.Context(), req, tt.q)
				usecasetest.MustField(t, err, tt.code, tt.field)
			}
			page, err := w.Admin.PageUsers(t.Context(), req, admin.ListUsersPage{Email: " ADA@Example.com "})
			if err != nil || len(page.Users) != 1 || page.Users[0].Email() != "ada@example.com" || page.NextCursor != "" {
				t.Fatalf("email lookup = %+v, %v", page, err)
			}
		}},
		{"default_page_is_20", func(t *testing.T, w *usecasetest.AdminWorld, req usecase.TrustedRequest, _ domain.UserID) {
			for i := range 21 {
				w.Clock.Advance(time.Second)
				if _, err := w.Admin.CreateUser(t.Context(), req, admin.CreateUser{Email: "u" + strings.Repeat("x", i) + "@example.com", Name: "U"}); err != nil {
					t.Fatal(err)
				}
			}
			page, err := w.Admin.PageUsers(t.Context(), req, admin.ListUsersPage{})
			if err != nil || len(page.Users) != admin.DefaultUsersPageLimit || page.NextCursor == "" {
				t.Fatalf("default page = %d users, next %q, %v", len(page.Users), page.NextCursor, err)
			}
			rest, err := w.Admin.PageUsers(t.Context(), req, admin.ListUsersPage{Cursor: page.NextCursor})
			if err != nil || len(rest.Users) != 2 || rest.NextCursor != "" || rest.Users[1].Email() != "ada@example.com" {
				t.Fatalf("second page = %+v, %v", rest, err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := usecasetest.NewAdminWorld(t)
			req := usecasetest.KeyReq(domain.ScopeUsersRead, domain.ScopeUsersWrite)
			u, err := w.Admin.CreateUser(t.Context(), req, admin.CreateUser{Email: "ada@example.com", Name: "Ada"})
			if err != nil {
				t.Fatal(err)
			}
			tt.run(t, w, req, u.ID())
		})
	}
}
