package admin_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// Ensure a search that is a whole address finds that account first, and
// one that matches no account as an address is searched within addresses.
func TestAdministration_SearchUsers(t *testing.T) {
	w := usecasetest.NewAdminWorld(t)
	req := usecasetest.KeyReq(domain.ScopeUsersRead, domain.ScopeUsersWrite)
	for _, e := range []string{"ada@example.com", "ada@example.com.au", "bob@example.com"} {
		if _, err := w.Admin.CreateUser(t.Context(), req, admin.CreateUser{Email: e, Name: "U"}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, search string
		want         []string
	}{
		{"whole_address_is_looked_up", "ada@example.com", []string{"ada@example.com"}},
		{"unknown_address_is_searched_within", "a@example.com", []string{"ada@example.com", "ada@example.com.au"}},
		{"part_is_searched_within", "example.com", []string{"ada@example.com", "ada@example.com.au", "bob@example.com"}},
		{"nothing_matches", "zed@example.org", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := w.Admin.SearchUsers(t.Context(), req, admin.ListUsersPage{EmailContains: tt.search})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, u := range page.Users {
				got = append(got, string(u.Email()))
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for _, e := range tt.want {
				found := false
				for _, g := range got {
					found = found || g == e
				}
				if !found {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}
