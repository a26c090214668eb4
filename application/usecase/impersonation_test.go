package usecase_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// TestImpersonation_names_both: an entry and an event written with a
// request context that noted an impersonation name the administrator too;
// without one, or without room for one, they do not.
func TestImpersonation_names_both(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	imp := domain.NewImpersonationSession("s-imp", "u-1", "admin-1", "hash", "", "", time.Hour, now)
	plain := domain.NewSession("s-plain", "u-1", "hash2", false, "", "", domain.SessionPolicy{ShortLifetime: time.Hour}, now)
	tests := []struct {
		name      string
		ctx       func(context.Context) context.Context
		wantAdmin string
	}{
		{"impersonation_noted", func(ctx context.Context) context.Context {
			ctx = usecase.WithImpersonationSlot(ctx)
			usecase.NoteImpersonation(ctx, imp)
			return ctx
		}, "admin-1"},
		{"plain_session_noted", func(ctx context.Context) context.Context {
			ctx = usecase.WithImpersonationSlot(ctx)
			usecase.NoteImpersonation(ctx, plain)
			return ctx
		}, ""},
		{"no_slot", func(ctx context.Context) context.Context {
			usecase.NoteImpersonation(ctx, imp)
			return ctx
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := usecasetest.NewAdminWorld(t)
			ctx := tt.ctx(t.Context())
			actor := usecase.UserActor("u-1", "req-1", "")
			tgt := usecase.Target{Type: "user", ID: "u-1"}
			err := w.Auditor.Change(ctx, actor, "test.change", &tgt, func(ctx context.Context, emit usecase.Emit) error {
				emit(domain.EventSessionRevoked, plain)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if es := w.Entries(t, "test.change"); len(es) != 1 || es[0].ImpersonatorID != tt.wantAdmin || es[0].ActorID != "u-1" {
				t.Fatalf("entries = %+v, want one by u-1 with impersonator %q", es, tt.wantAdmin)
			}
			msgs := claimEvents(t, w)
			if len(msgs) != 1 {
				t.Fatalf("outbox = %+v, want one event", msgs)
			}
			var p struct {
				Actor *struct {
					UserID         string `json:"userId"`
					ImpersonatedBy string `json:"impersonatedBy"`
				} `json:"actor"`
			}
			if err := json.Unmarshal(msgs[0].Payload, &p); err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.wantAdmin == "" && p.Actor != nil:
				t.Fatalf("payload %s carries an actor", msgs[0].Payload)
			case tt.wantAdmin != "" && (p.Actor == nil || p.Actor.UserID != "u-1" || p.Actor.ImpersonatedBy != tt.wantAdmin):
				t.Fatalf("payload %s, want actor {u-1, %s}", msgs[0].Payload, tt.wantAdmin)
			}
		})
	}
}
