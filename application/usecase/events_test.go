package usecase_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// claimEvents takes the events waiting in w's outbox.
func claimEvents(t *testing.T, w *usecasetest.AdminWorld) []ports.OutboxMessage {
	t.Helper()
	msgs, err := w.Outbox.Claim(t.Context(), ports.OutboxEvents, w.Clock.Now().Add(time.Second), time.Minute, 100)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// TestAuditor_Change: one case per rule of usecase.Auditor.Change and
// usecase.Events.Do.
func TestAuditor_Change(t *testing.T) {
	t.Parallel()
	actor := usecase.Actor{Type: domain.ActorServiceKey, ID: "key-1", RequestID: "req-1"}
	newUser := func(t *testing.T, w *usecasetest.AdminWorld, email string) *domain.User {
		t.Helper()
		u, err := domain.NewUser(domain.UserID("u-"+email), "Ada", domain.Email(email), w.Clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	mustNoUser := func(t *testing.T, w *usecasetest.AdminWorld, id domain.UserID) {
		t.Helper()
		if _, err := w.Users.Get(t.Context(), id); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("user %s: err = %v, want it gone with the unit of work", id, err)
		}
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, w *usecasetest.AdminWorld)
	}{
		{"success_keeps_the_change_its_entry_and_its_events", func(t *testing.T, w *usecasetest.AdminWorld) {
			u := newUser(t, w, "ada@example.com")
			tgt := usecase.Target{Type: "user"}
			err := w.Auditor.Change(t.Context(), actor, "users.create", &tgt, func(ctx context.Context, emit usecase.Emit) error {
				if err := w.Users.Create(ctx, u); err != nil {
					return err
				}
				tgt.ID = string(u.ID())
				emit(domain.EventUserCreated, u)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			es := w.Entries(t, "users.create")
			if len(es) != 1 || es[0].Outcome != domain.OutcomeSuccess || es[0].TargetID != string(u.ID()) {
				t.Fatalf("entries = %+v, want one success naming the user", es)
			}
			msgs := claimEvents(t, w)
			if len(msgs) != 1 || msgs[0].Type != "user.created" || msgs[0].Topic != ports.OutboxEvents || len(msgs[0].ID) < 5 || msgs[0].ID[:4] != "msg_" {
				t.Fatalf("outbox = %+v, want one user.created", msgs)
			}
			var p struct {
				Type string         `json:"type"`
				Data map[string]any `json:"data"`
			}
			if err := json.Unmarshal(msgs[0].Payload, &p); err != nil || p.Data["id"] != string(u.ID()) || p.Data["passkeys"] != 0.0 {
				t.Fatalf("payload %s: %v", msgs[0].Payload, err)
			}
		}},
		{"failure_keeps_nothing_but_its_entry", func(t *testing.T, w *usecasetest.AdminWorld) {
			u := newUser(t, w, "bob@example.com")
			refused := domain.Invalid("user.refused", "Refused")
			err := w.Auditor.Change(t.Context(), actor, "users.create", &usecase.Target{Type: "user"}, func(ctx context.Context, emit usecase.Emit) error {
				if err := w.Users.Create(ctx, u); err != nil {
					return err
				}
				emit(domain.EventUserCreated, u)
				return refused
			})
			if !errors.Is(err, refused) {
				t.Fatalf("err = %v, want the change's own", err)
			}
			mustNoUser(t, w, u.ID())
			if msgs := claimEvents(t, w); len(msgs) != 0 {
				t.Fatalf("outbox = %+v, want nothing", msgs)
			}
			if es := w.Entries(t, "users.create"); len(es) != 1 || es[0].Outcome == domain.OutcomeSuccess || es[0].Code != "user.refused" {
				t.Fatalf("entries = %+v, want the refusal alone", es)
			}
		}},
		{"an_event_that_does_not_encode_undoes_the_change", func(t *testing.T, w *usecasetest.AdminWorld) {
			u := newUser(t, w, "cy@example.com")
			err := w.Auditor.Change(t.Context(), actor, "users.create", &usecase.Target{Type: "user"}, func(ctx context.Context, emit usecase.Emit) error {
				if err := w.Users.Create(ctx, u); err != nil {
					return err
				}
				emit(domain.EventUserCreated, "not a user")
				return nil
			})
			if domain.KindOf(err) != domain.KindInternal {
				t.Fatalf("err = %v, want internal", err)
			}
			mustNoUser(t, w, u.ID())
			if es := w.Entries(t, "users.create"); len(es) != 1 || es[0].Outcome == domain.OutcomeSuccess {
				t.Fatalf("entries = %+v, want the failure alone", es)
			}
		}},
		{"an_event_outside_the_catalogue_undoes_the_change", func(t *testing.T, w *usecasetest.AdminWorld) {
			u := newUser(t, w, "dee@example.com")
			err := w.Events.Do(t.Context(), func(ctx context.Context, emit usecase.Emit) error {
				if err := w.Users.Create(ctx, u); err != nil {
					return err
				}
				emit("user.exploded", u)
				return nil
			})
			if domain.KindOf(err) != domain.KindInternal {
				t.Fatalf("err = %v, want internal", err)
			}
			mustNoUser(t, w, u.ID())
		}},
		{"a_do_inside_another_commits_with_it", func(t *testing.T, w *usecasetest.AdminWorld) {
			u, v := newUser(t, w, "eve@example.com"), newUser(t, w, "fay@example.com")
			err := w.Events.Do(t.Context(), func(ctx context.Context, emit usecase.Emit) error {
				if err := w.Events.Do(ctx, func(ctx context.Context, emit usecase.Emit) error {
					emit(domain.EventUserCreated, u)
					return w.Users.Create(ctx, u)
				}); err != nil {
					return err
				}
				if err := w.Users.Create(ctx, v); err != nil {
					return err
				}
				return errors.New("the outer change fails")
			})
			if err == nil {
				t.Fatal("err = nil")
			}
			mustNoUser(t, w, u.ID())
			mustNoUser(t, w, v.ID())
			if msgs := claimEvents(t, w); len(msgs) != 0 {
				t.Fatalf("outbox = %+v, want nothing", msgs)
			}
		}},
		{"user_data_is_read_in_the_unit", func(t *testing.T, w *usecasetest.AdminWorld) {
			u := newUser(t, w, "gil@example.com")
			if err := w.Users.Create(t.Context(), u); err != nil {
				t.Fatal(err)
			}
			pk, err := domain.NewPasskeyCredential(domain.PasskeyCredential{ID: []byte("cred-1"), UserID: u.ID(), PublicKey: []byte("cose"), CreatedAt: w.Clock.Now()})
			if err != nil {
				t.Fatal(err)
			}
			err = w.Events.Do(t.Context(), func(ctx context.Context, emit usecase.Emit) error {
				if err := memory.NewPasskeyRepository(w.DB).Create(ctx, pk); err != nil {
					return err
				}
				emit(domain.EventUserUpdated, u)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			msgs := claimEvents(t, w)
			var p struct {
				Data map[string]any `json:"data"`
			}
			if len(msgs) != 1 || json.Unmarshal(msgs[0].Payload, &p) != nil || p.Data["passkeys"] != 1.0 {
				t.Fatalf("outbox = %+v, want user.updated counting the passkey just made", msgs)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, usecasetest.NewAdminWorld(t))
		})
	}
}
