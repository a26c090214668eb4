package admin_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/organization"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

func TestMemberships_of_user(t *testing.T) {
	w := usecasetest.NewAdminWorld(t)
	m := admin.NewMemberships(w.Admin, memory.NewOrganizationRepository(w.DB))
	boss := w.SignedIn(t, "boss@example.com")
	ada := w.SignedIn(t, "ada@example.com")
	eve := w.SignedIn(t, "eve@example.com")
	ctx := t.Context()
	for _, slug := range []string{"first", "second"} {
		if _, _, err := w.Orgs.Create(ctx, usecase.OrgRequest{Principal: ada}, organization.CreateOrganization{Name: slug, Slug: slug}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		req   usecase.Caller
		id    domain.UserID
		slugs []string
		code  string
	}{
		{"administrator_reads_them_oldest_first", usecase.AdminRequest{Principal: boss}, ada.User.ID(), []string{"first", "second"}, ""},
		{"key_with_users_read", usecasetest.KeyReq(domain.ScopeUsersRead), ada.User.ID(), []string{"first", "second"}, ""},
		{"none_is_empty", usecase.AdminRequest{Principal: boss}, eve.User.ID(), nil, ""},
		{"plain_user_is_refused", usecase.AdminRequest{Principal: eve}, ada.User.ID(), nil, "admin.get_user_forbidden"},
		{"key_without_scope_is_refused", usecasetest.KeyReq(domain.ScopeOrganizationsRead), ada.User.ID(), nil, "auth.insufficient_scope"},
		{"missing_user_is_not_found", usecase.AdminRequest{Principal: boss}, "nobody", nil, "admin.user_not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orgs, err := m.OfUser(ctx, tt.req, tt.id)
			if tt.code != "" {
				usecasetest.MustCode(t, err, tt.code)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var slugs []string
			for _, o := range orgs {
				slugs = append(slugs, o.Slug())
			}
			if len(slugs) != len(tt.slugs) || (len(slugs) > 0 && (slugs[0] != tt.slugs[0] || slugs[1] != tt.slugs[1])) {
				t.Fatalf("organizations = %v, want %v", slugs, tt.slugs)
			}
		})
	}
}
