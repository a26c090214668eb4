package account_test

import (
	"errors"
	"testing"

	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// Ensure a user ends only their own live sessions by id: another user's
// session, a token in place of an id, and an administrator's impersonation
// of the user are refused, and stay live.
func TestRevokeOwnSession_ends_only_the_users_own_sessions(t *testing.T) {
	w := usecasetest.NewAdminWorld(t)
	boss := w.SignedIn(t, "boss@example.com")
	bob, bobToken := w.SignedInWithToken(t, "bob@example.com")
	eve, eveToken := w.SignedInWithToken(t, "eve@example.com")
	acting, err := w.Admin.ImpersonateUser(t.Context(), usecase.AdminRequest{Principal: boss}, bob.User.ID(), usecase.Client{})
	if err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name  string
		id    domain.SessionID
		token string // the session that must stay live
	}{
		{"another user's", eve.Session.ID(), eveToken},
		{"a token, not an id", domain.SessionID(bobToken), bobToken},
		{"an impersonation of the user", acting.Session.ID(), acting.Token},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := w.Sessions.RevokeOwnSession(t.Context(), account.RevokeOwnSession{Principal: bob, ID: tt.id})
			if !errors.Is(err, account.ErrNotOwnSession) {
				t.Fatalf("err = %v, want ErrNotOwnSession", err)
			}
			if _, err := w.Sessions.Authenticate(t.Context(), account.Authenticate{Token: tt.token}); err != nil {
				t.Fatalf("the session ended: %v", err)
			}
		})
	}
}

// Ensure a user ends another of their sessions, then the current one (which
// it reports), and that an ended session is no longer theirs to end.
func TestRevokeOwnSession_ends_the_users_session(t *testing.T) {
	w := usecasetest.NewAdminWorld(t)
	bob, bobToken := w.SignedInWithToken(t, "bob@example.com")
	other, err := w.SignIns.SignIn(t.Context(), account.SignIn{Email: "bob@example.com", Password: usecasetest.Password})
	if err != nil {
		t.Fatal(err)
	}

	current, err := w.Sessions.RevokeOwnSession(t.Context(), account.RevokeOwnSession{Principal: bob, ID: other.Session.ID()})
	if err != nil || current {
		t.Fatalf("ending the other session: current = %v, err = %v; want false, nil", current, err)
	}
	_, err = w.Sessions.Authenticate(t.Context(), account.Authenticate{Token: other.Token})
	usecasetest.MustCode(t, err, "UNAUTHORIZED")
	if _, err := w.Sessions.Authenticate(t.Context(), account.Authenticate{Token: bobToken}); err != nil {
		t.Fatalf("the current session ended with the other: %v", err)
	}

	_, err = w.Sessions.RevokeOwnSession(t.Context(), account.RevokeOwnSession{Principal: bob, ID: other.Session.ID()})
	if !errors.Is(err, account.ErrNotOwnSession) {
		t.Fatalf("ending the ended session: %v, want ErrNotOwnSession", err)
	}

	current, err = w.Sessions.RevokeOwnSession(t.Context(), account.RevokeOwnSession{Principal: bob, ID: bob.Session.ID()})
	if err != nil || !current {
		t.Fatalf("ending the current session: current = %v, err = %v; want true, nil", current, err)
	}
	_, err = w.Sessions.Authenticate(t.Context(), account.Authenticate{Token: bobToken})
	usecasetest.MustCode(t, err, "UNAUTHORIZED")
}
