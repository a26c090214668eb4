package account_test

import (
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/metrics"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// Ensure each password sign-in is counted once, by what decided it: the
// client hears "invalid e-mail or password" for an unknown address, a
// wrong password and a locked account alike, the metrics tell them apart.
func TestSignIn_outcomes_are_counted(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	m := metrics.New(metrics.Options{})
	w.SignIns.Observe(m)
	w.MustSignUp(t, "ada@example.com")
	w.MustSignUp(t, "bob@example.com")
	bob := mustUserID(t, w, "bob@example.com")
	if err := w.Users.Update(t.Context(), bob, func(u *domain.User) error {
		return u.Ban("spam", time.Time{}, w.Clock.Now())
	}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		email, password string
		want            ports.SignInOutcome
	}{
		{"nobody@example.com", usecasetest.Password, ports.SignInFailure},
		{"not an address", usecasetest.Password, ports.SignInFailure},
		{"ada@example.com", usecasetest.Password, ports.SignInSuccess},
		{"bob@example.com", usecasetest.Password, ports.SignInBanned},
		{"ada@example.com", "wrong password", ports.SignInFailure},
		{"ada@example.com", "wrong password", ports.SignInFailure},
		{"ada@example.com", "wrong password", ports.SignInFailure}, // the threshold: now locked
		{"ada@example.com", usecasetest.Password, ports.SignInLocked},
		{"ada@example.com", "wrong password", ports.SignInLocked},
	}
	want := map[ports.SignInOutcome]float64{}
	for i, s := range steps {
		_, _ = w.SignIns.SignIn(t.Context(), account.SignIn{Email: s.email, Password: s.password})
		w.Settle(t) // the failed attempts are written after the answer
		want[s.want]++
		for _, o := range []ports.SignInOutcome{ports.SignInSuccess, ports.SignInFailure, ports.SignInLocked, ports.SignInBanned, ports.SignInError} {
			if got := usecasetest.SignIns(t, m, ports.SignInPassword, o); got != want[o] {
				t.Fatalf("after step %d (%s, want %s): %s = %v, want %v", i+1, s.email, s.want, o, got, want[o])
			}
		}
	}
}

// Ensure an unverified address is counted as such when verification is
// required.
func TestSignIn_unverified_outcome_is_counted(t *testing.T) {
	w := usecasetest.NewWorld(t, true)
	m := metrics.New(metrics.Options{})
	w.SignIns.Observe(m)
	w.MustSignUp(t, "ada@example.com")
	_, err := w.SignIns.SignIn(t.Context(), account.SignIn{Email: "ada@example.com", Password: usecasetest.Password})
	usecasetest.MustCode(t, err, "auth.email_not_verified")
	if got := usecasetest.SignIns(t, m, ports.SignInPassword, ports.SignInEmailNotVerified); got != 1 {
		t.Fatalf("email_not_verified = %v, want 1", got)
	}
}
