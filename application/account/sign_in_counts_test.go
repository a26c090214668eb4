package account_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// hourCounts returns the sign-ins stats holds for the hour of now.
func hourCounts(t *testing.T, stats ports.SignInStats, now time.Time) (succeeded, failed int) {
	t.Helper()
	got, err := stats.Series(t.Context(), now, now.Add(time.Nanosecond), ports.StepHour)
	if err != nil || len(got) != 1 {
		t.Fatalf("Series = %+v, %v", got, err)
	}
	return got[0].Succeeded, got[0].Failed
}

// Ensure every password sign-in is recorded in the durable counts, an
// unknown address as a failure like a wrong password.
func TestSignIn_outcomes_are_recorded_in_the_counts(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	stats := memory.NewSignInStats()
	w.SignIn.CountSignIns(usecase.NewSignInCounter(stats, w.Clock, nil))
	w.MustSignUp(t, "ada@example.com")
	w.MustSignUp(t, "bob@example.com")
	bob := mustUserID(t, w, "bob@example.com")
	if err := w.Users.Update(t.Context(), bob, func(u *domain.User) error {
		return u.Ban("spam", time.Time{}, w.Clock.Now())
	}); err != nil {
		t.Fatal(err)
	}
	for i, s := range []struct {
		email, password   string
		succeeded, failed int
	}{
		{"nobody@example.com", usecasetest.Password, 0, 1},
		{"not an address", usecasetest.Password, 0, 2},
		{"ada@example.com", usecasetest.Password, 1, 2},
		{"ada@example.com", "wrong password", 1, 3},
		{"bob@example.com", usecasetest.Password, 1, 4},
	} {
		_, _ = w.SignIn.Handle(t.Context(), account.SignIn{Email: s.email, Password: s.password})
		if ok, failed := hourCounts(t, stats, w.Clock.Now()); ok != s.succeeded || failed != s.failed {
			t.Fatalf("after step %d (%s): %d succeeded, %d failed; want %d, %d", i+1, s.email, ok, failed, s.succeeded, s.failed)
		}
	}
}

// Ensure a password that asks for a second factor is not counted, and the
// challenge's answers are, each as what it was.
func TestTwoFactor_sign_ins_are_recorded_in_the_counts(t *testing.T) {
	w := newTFWorld(t)
	stats := memory.NewSignInStats()
	counter := usecase.NewSignInCounter(stats, w.Clock, nil)
	w.signIn.CountSignIns(counter)
	w.tf.CountSignIns(counter)
	w.enable(t)
	id := w.challenge(t)
	if ok, failed := hourCounts(t, stats, w.Clock.Now()); ok != 0 || failed != 0 {
		t.Fatalf("after the password: %d succeeded, %d failed; want none counted", ok, failed)
	}
	wrong := "000000"
	if wrong == w.code() {
		wrong = "111111"
	}
	_ = w.answer(t, id, wrong)
	if err := w.answer(t, id, w.code()); err != nil {
		t.Fatal(err)
	}
	if ok, failed := hourCounts(t, stats, w.Clock.Now()); ok != 1 || failed != 1 {
		t.Fatalf("after the answers: %d succeeded, %d failed; want 1, 1", ok, failed)
	}
}

// failingStats is a SignInStats whose writes fail.
type failingStats struct{ ports.SignInStats }

func (failingStats) Record(context.Context, time.Time, ports.SignInOutcome) error {
	return errors.New("database down")
}

// Ensure a count that cannot be written does not fail the sign-in.
func TestSignIn_count_not_written_does_not_fail_the_sign_in(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	w.SignIn.CountSignIns(usecase.NewSignInCounter(failingStats{}, w.Clock, nil))
	w.MustSignUp(t, "ada@example.com")
	if _, err := w.SignIn.Handle(t.Context(), account.SignIn{Email: "ada@example.com", Password: usecasetest.Password}); err != nil {
		t.Fatalf("sign-in = %v, want a session", err)
	}
	_, err := w.SignIn.Handle(t.Context(), account.SignIn{Email: "ada@example.com", Password: "wrong password"})
	usecasetest.MustCode(t, err, "auth.invalid_credentials")
}

// Ensure the purge removes the hourly counts past their retention, and
// only those.
func TestPurgeExpired_removes_old_sign_in_counts(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	stats := memory.NewSignInStats()
	now := w.Clock.Now()
	for _, at := range []time.Time{now.Add(-account.SignInCountRetention - time.Hour), now.Add(-account.SignInCountRetention + time.Hour), now} {
		if err := stats.Record(t.Context(), at, ports.SignInSuccess); err != nil {
			t.Fatal(err)
		}
	}
	purge := account.NewPurgeExpiredHandler(memory.NewSessionRepository(w.DB), memory.NewVerificationRepository(w.DB),
		memory.NewServiceKeyRepository(w.DB), memory.NewOAuthGrantRepository(w.DB), memory.NewMFAChallengeRepository(w.DB),
		memory.NewWebAuthnChallengeRepository(w.DB), memory.NewFederationStateRepository(w.DB), stats, memory.NewSpentTokens(), w.Clock)
	p, err := purge.Handle(t.Context())
	if err != nil || p.SignInCounts != 1 {
		t.Fatalf("purge = %+v, %v; want the one hour past retention removed", p, err)
	}
	got, err := stats.Series(t.Context(), now.Add(-account.SignInCountRetention-2*time.Hour), now.Add(time.Hour), ports.StepDay)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, b := range got {
		total += b.Succeeded
	}
	if total != 2 {
		t.Fatalf("%d sign-ins left, want 2", total)
	}
}
