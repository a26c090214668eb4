package usecase_test

import (
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// TestStepUp: one case per rule of usecase.StepUp.
func TestStepUp(t *testing.T) {
	t.Parallel()
	const window = 10 * time.Minute
	type world struct {
		*usecasetest.World
		s usecase.StepUp
		p usecase.Principal
	}
	withPasskey := func(t *testing.T, w *world) {
		t.Helper()
		pk, err := domain.NewPasskeyCredential(domain.PasskeyCredential{ID: []byte("cred-1"), UserID: w.p.User.ID(), PublicKey: []byte("cose"), CreatedAt: w.Clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if err := memory.NewPasskeyRepository(w.DB).Create(t.Context(), pk); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, w *world)
	}{
		{"no_second_factor_is_never_asked", func(t *testing.T, w *world) {
			if err := w.s.Require(t.Context(), w.p); err != nil {
				t.Fatalf("Require = %v, want nil", err)
			}
			if has, err := w.s.Has(t.Context(), w.p); err != nil || has {
				t.Fatalf("HasSecondFactor = %v, %v; want false", has, err)
			}
		}},
		{"two_factor_on_without_proof_is_asked", func(t *testing.T, w *world) {
			w.p.User.SetTwoFactorEnabled(true, w.Clock.Now())
			usecasetest.MustCode(t, w.s.Require(t.Context(), w.p), "mfa.step_up_required")
			if has, err := w.s.Has(t.Context(), w.p); err != nil || !has {
				t.Fatalf("HasSecondFactor = %v, %v; want true", has, err)
			}
		}},
		{"a_passkey_without_proof_is_asked", func(t *testing.T, w *world) {
			withPasskey(t, w)
			usecasetest.MustCode(t, w.s.Require(t.Context(), w.p), "mfa.step_up_required")
			if has, err := w.s.Has(t.Context(), w.p); err != nil || !has {
				t.Fatalf("HasSecondFactor = %v, %v; want true", has, err)
			}
		}},
		{"a_proof_within_the_window_passes", func(t *testing.T, w *world) {
			w.p.User.SetTwoFactorEnabled(true, w.Clock.Now())
			w.p.Session.ProveSecondFactor(domain.MethodOTP, w.Clock.Now())
			w.Clock.Advance(window - time.Second)
			if err := w.s.Require(t.Context(), w.p); err != nil {
				t.Fatalf("Require = %v, want nil", err)
			}
		}},
		{"a_proof_older_than_the_window_is_asked", func(t *testing.T, w *world) {
			w.p.User.SetTwoFactorEnabled(true, w.Clock.Now())
			w.p.Session.ProveSecondFactor(domain.MethodOTP, w.Clock.Now())
			w.Clock.Advance(window)
			usecasetest.MustCode(t, w.s.Require(t.Context(), w.p), "mfa.step_up_required")
			// An old proof still shows that the user has a factor.
			if has, err := w.s.Has(t.Context(), w.p); err != nil || !has {
				t.Fatalf("HasSecondFactor = %v, %v; want true", has, err)
			}
		}},
		{"a_code_proven_before_two_factor_went_off_is_no_factor", func(t *testing.T, w *world) {
			w.p.Session.ProveSecondFactor(domain.MethodOTP, w.Clock.Now())
			if has, err := w.s.Has(t.Context(), w.p); err != nil || has {
				t.Fatalf("HasSecondFactor = %v, %v; want false", has, err)
			}
			if err := w.s.Require(t.Context(), w.p); err != nil {
				t.Fatalf("Require = %v, want nil", err)
			}
		}},
		{"a_passkey_sign_in_counts", func(t *testing.T, w *world) {
			withPasskey(t, w)
			w.p.Session.ProvePasskey(true, w.Clock.Now())
			if err := w.s.Require(t.Context(), w.p); err != nil {
				t.Fatalf("Require = %v, want nil", err)
			}
		}},
		{"no_session_is_unauthorized", func(t *testing.T, w *world) {
			usecasetest.MustCode(t, w.s.Require(t.Context(), usecase.Principal{User: w.p.User}), "UNAUTHORIZED")
			_, err := w.s.Has(t.Context(), usecase.Principal{})
			usecasetest.MustCode(t, err, "UNAUTHORIZED")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := &world{World: usecasetest.NewWorld(t, false)}
			w.s = usecase.NewStepUp(memory.NewPasskeyRepository(w.DB), w.Clock, window)
			up := w.MustSignUp(t, "ada@example.com")
			w.p = usecase.Principal{User: up.User, Session: up.Session}
			tt.fn(t, w)
		})
	}
}
