package admin_test

import (
	"errors"
	"testing"

	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// Ensure an administrator ends only the sessions of the user they name:
// another user's session is refused and stays live.
func TestRevokeSessionOf_ends_only_the_users_own_session(t *testing.T) {
	w := usecasetest.NewAdminWorld(t)
	boss := w.SignedIn(t, "boss@example.com")
	bob, bobToken := w.SignedInWithToken(t, "bob@example.com")
	eve, eveToken := w.SignedInWithToken(t, "eve@example.com")
	req := usecase.AdminRequest{Principal: boss}

	err := w.Admin.RevokeSessionOf(t.Context(), req, bob.User.ID(), eve.Session.ID())
	if !errors.Is(err, admin.ErrNotUsersSession) {
		t.Fatalf("revoking eve's session as bob's: %v, want ErrNotUsersSession", err)
	}
	if _, err := w.Sessions.Authenticate(t.Context(), account.Authenticate{Token: eveToken}); err != nil {
		t.Fatalf("eve's session ended: %v", err)
	}

	if err := w.Admin.RevokeSessionOf(t.Context(), req, bob.User.ID(), bob.Session.ID()); err != nil {
		t.Fatal(err)
	}
	_, err = w.Sessions.Authenticate(t.Context(), account.Authenticate{Token: bobToken})
	usecasetest.MustCode(t, err, "UNAUTHORIZED")
	// Once ended, it is no longer one of bob's live sessions.
	err = w.Admin.RevokeSessionOf(t.Context(), req, bob.User.ID(), bob.Session.ID())
	if !errors.Is(err, admin.ErrNotUsersSession) {
		t.Fatalf("revoking bob's ended session: %v, want ErrNotUsersSession", err)
	}
}
