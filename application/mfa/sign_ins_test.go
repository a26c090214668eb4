package mfa_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/adapters/metrics"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

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
		if got := usecasetest.SignIns(t, m, c.method, c.outcome); got != c.want {
			t.Errorf("%s/%s = %v, want %v", c.method, c.outcome, got, c.want)
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
	if ok, failed := usecasetest.HourCounts(t, counter, stats, w.Clock.Now()); ok != 0 || failed != 0 {
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
	if ok, failed := usecasetest.HourCounts(t, counter, stats, w.Clock.Now()); ok != 1 || failed != 1 {
		t.Fatalf("after the answers: %d succeeded, %d failed; want 1, 1", ok, failed)
	}
}
