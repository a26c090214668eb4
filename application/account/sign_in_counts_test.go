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

// Ensure every password sign-in is recorded in the durable counts, an
// unknown address as a failure like a wrong password.
func TestSignIn_outcomes_are_recorded_in_the_counts(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	stats := memory.NewSignInStats()
	counter := usecase.NewSignInCounter(stats, w.Clock, nil)
	w.SignIns.CountSignIns(counter)
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
		_, _ = w.SignIns.SignIn(t.Context(), account.SignIn{Email: s.email, Password: s.password})
		if ok, failed := usecasetest.HourCounts(t, counter, stats, w.Clock.Now()); ok != s.succeeded || failed != s.failed {
			t.Fatalf("after step %d (%s): %d succeeded, %d failed; want %d, %d", i+1, s.email, ok, failed, s.succeeded, s.failed)
		}
	}
}

// failingStats is a SignInStats whose writes fail.
type failingStats struct{ ports.SignInStats }

func (failingStats) Record(context.Context, time.Time, ports.SignInOutcome, int) error {
	return errors.New("database down")
}

// downOnce is a SignInStats whose first write fails.
type downOnce struct {
	ports.SignInStats
	failed bool
}

func (d *downOnce) Record(ctx context.Context, at time.Time, o ports.SignInOutcome, n int) error {
	if !d.failed {
		d.failed = true
		return errors.New("database down")
	}
	return d.SignInStats.Record(ctx, at, o, n)
}

// Ensure the counter writes nothing until flushed, then one write per hour
// and outcome with the sum; that counts a failed write missed are written
// by the next flush; and that a flush with nothing gathered writes nothing.
func TestSignInCounter_gathers_and_flushes(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	stats := &downOnce{SignInStats: memory.NewSignInStats()}
	c := usecase.NewSignInCounter(stats, w.Clock, nil)
	now := w.Clock.Now()
	for range 3 {
		c.Count(t.Context(), ports.SignInSuccess)
	}
	c.Count(t.Context(), ports.SignInFailure)
	c.Count(t.Context(), ports.SignInSecondFactorRequired)
	got, err := stats.SignInStats.Series(t.Context(), now, now.Add(time.Nanosecond), ports.StepHour)
	if err != nil || got[0].Succeeded+got[0].Failed != 0 {
		t.Fatalf("before a flush: %+v, %v; want nothing written", got, err)
	}
	if err := c.Flush(t.Context()); err == nil {
		t.Fatal("a flush whose write failed returned no error")
	}
	if ok, failed := usecasetest.HourCounts(t, c, stats, now); ok != 3 || failed != 1 {
		t.Fatalf("after the retry: %d succeeded, %d failed; want 3, 1", ok, failed)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ok, failed := usecasetest.HourCounts(t, c, stats, now); ok != 3 || failed != 1 {
		t.Fatalf("after an empty flush: %d succeeded, %d failed; want 3, 1", ok, failed)
	}
	var none *usecase.SignInCounter
	none.Count(t.Context(), ports.SignInSuccess)
	if err := none.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// Ensure a count that cannot be written does not fail the sign-in.
func TestSignIn_count_not_written_does_not_fail_the_sign_in(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	w.SignIns.CountSignIns(usecase.NewSignInCounter(failingStats{}, w.Clock, nil))
	w.MustSignUp(t, "ada@example.com")
	if _, err := w.SignIns.SignIn(t.Context(), account.SignIn{Email: "ada@example.com", Password: usecasetest.Password}); err != nil {
		t.Fatalf("sign-in = %v, want a session", err)
	}
	_, err := w.SignIns.SignIn(t.Context(), account.SignIn{Email: "ada@example.com", Password: "wrong password"})
	usecasetest.MustCode(t, err, "auth.invalid_credentials")
}

// Ensure the purge removes the hourly counts past their retention, and
// only those.
func TestPurgeExpired_removes_old_sign_in_counts(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	stats := memory.NewSignInStats()
	now := w.Clock.Now()
	for _, at := range []time.Time{now.Add(-account.SignInCountRetention - time.Hour), now.Add(-account.SignInCountRetention + time.Hour), now} {
		if err := stats.Record(t.Context(), at, ports.SignInSuccess, 1); err != nil {
			t.Fatal(err)
		}
	}
	purge := account.NewPurger(memory.NewSessionRepository(w.DB), memory.NewVerificationRepository(w.DB),
		memory.NewServiceKeyRepository(w.DB), memory.NewOAuthGrantRepository(w.DB), memory.NewMFAChallengeRepository(w.DB),
		memory.NewWebAuthnChallengeRepository(w.DB), memory.NewFederationStateRepository(w.DB), stats, memory.NewSpentTokens(), w.Clock)
	p, err := purge.PurgeExpired(t.Context())
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
