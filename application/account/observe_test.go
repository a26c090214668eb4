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

// signIns returns the count of gatehouse_sign_ins_total{method, outcome} in m.
func signIns(t *testing.T, m *metrics.Metrics, method ports.SignInMethod, outcome ports.SignInOutcome) float64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "gatehouse_sign_ins_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["method"] == string(method) && labels["outcome"] == string(outcome) {
				return s.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no series for %s/%s", method, outcome)
	return 0
}

// Ensure each password sign-in is counted once, by what decided it: the
// client hears "invalid e-mail or password" for an unknown address, a
// wrong password and a locked account alike, the metrics tell them apart.
func TestSignIn_outcomes_are_counted(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	m := metrics.New(metrics.Options{})
	w.SignIn.Observe(m)
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
		_, _ = w.SignIn.Handle(t.Context(), account.SignIn{Email: s.email, Password: s.password})
		w.Settle(t) // the failed attempts are written after the answer
		want[s.want]++
		for _, o := range []ports.SignInOutcome{ports.SignInSuccess, ports.SignInFailure, ports.SignInLocked, ports.SignInBanned, ports.SignInError} {
			if got := signIns(t, m, ports.SignInPassword, o); got != want[o] {
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
	w.SignIn.Observe(m)
	w.MustSignUp(t, "ada@example.com")
	_, err := w.SignIn.Handle(t.Context(), account.SignIn{Email: "ada@example.com", Password: usecasetest.Password})
	usecasetest.MustCode(t, err, "auth.email_not_verified")
	if got := signIns(t, m, ports.SignInPassword, ports.SignInEmailNotVerified); got != 1 {
		t.Fatalf("email_not_verified = %v, want 1", got)
	}
}

// Ensure a password sign-in that asks for a second factor, and the answers
// to its challenge, are counted; a code answered inside a session is not a
// sign-in.
func TestTwoFactor_sign_in_outcomes_are_counted(t *testing.T) {
	w := newTFWorld(t)
	m := metrics.New(metrics.Options{})
	w.signIn.Observe(m)
	w.tf.Observe(m)
	w.enable(t) // answers a code in a session: not counted
	id := w.challenge(t)
	wrong := "000000"
	if wrong == w.code() {
		wrong = "111111"
	}
	if err := w.answer(t, id, wrong); err == nil {
		t.Fatal("a wrong code was accepted")
	}
	if err := w.answer(t, id, w.code()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method  ports.SignInMethod
		outcome ports.SignInOutcome
		want    float64
	}{
		{ports.SignInPassword, ports.SignInSecondFactorRequired, 1},
		{ports.SignInPassword, ports.SignInSuccess, 0},
		{ports.SignInSecondFactor, ports.SignInFailure, 1},
		{ports.SignInSecondFactor, ports.SignInSuccess, 1},
	} {
		if got := signIns(t, m, c.method, c.outcome); got != c.want {
			t.Errorf("%s/%s = %v, want %v", c.method, c.outcome, got, c.want)
		}
	}
}
