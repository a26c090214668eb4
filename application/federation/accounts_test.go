package federation_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/adapters/signingkeys"
	"github.com/gatehouse/gatehouse/adapters/system"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// Select finds the account a Better Auth account route names: by id, or
// for older clients the user's first account at a provider, and never
// another user's.
func TestAccounts_select(t *testing.T) {
	f := newFedWorld(t)
	sealer, err := signingkeys.NewSecretSealer(signingkeys.Secrets{"a-test-secret-of-at-least-32-bytes-long"})
	if err != nil {
		t.Fatal(err)
	}
	accounts := federation.NewAccounts(memory.NewIdentityProviderRepository(f.DB), f.accounts, f.Creds, memory.NewPasskeyRepository(f.DB), f.up,
		sealer, f.AuditorOf(memory.NewAuditLog(f.DB)), system.NewIDGenerator(), f.Clock, federation.Settings{Auth: f.Settings}, usecase.AdminSettings{})
	f.mustProvider(t, false)
	ada, bob := f.MustSignUp(t, "ada@example.com").User, f.MustSignUp(t, "bob@example.com").User
	if err := f.accounts.Create(t.Context(), domain.LinkedAccount{ID: "acc_ada_idp", UserID: ada.ID(), ProviderID: "idp", Subject: "sub-ada",
		CreatedAt: f.Clock.Now(), UpdatedAt: f.Clock.Now()}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		sel      federation.AccountSelection
		want     string
		wantCode string
	}{
		{"by_id", federation.AccountSelection{AccountID: "acc_ada_idp"}, "acc_ada_idp", ""},
		{"by_id_with_own_user_id", federation.AccountSelection{AccountID: "acc_ada_idp", UserID: string(ada.ID())}, "acc_ada_idp", ""},
		{"by_provider", federation.AccountSelection{ProviderID: "idp"}, "acc_ada_idp", ""},
		{"another_users_id", federation.AccountSelection{AccountID: "acc_ada_idp", UserID: string(bob.ID())}, "", "linked_account.not_found"},
		{"provider_without_an_account", federation.AccountSelection{ProviderID: "other"}, "", "linked_account.not_found"},
		{"nothing_named", federation.AccountSelection{}, "", "linked_account.not_named"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := accounts.Select(t.Context(), ada.ID(), tc.sel)
			if tc.wantCode != "" {
				usecasetest.MustCode(t, err, tc.wantCode)
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Select = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
