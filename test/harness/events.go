package harness

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/ports"
)

// The transactional outbox, from outside: every change writes its events
// in its own transaction, read here from the store's outbox as the relays
// read them; and a change whose event or audit entry cannot be written is
// not kept at all.

// OutboxEvent is an event waiting in the outbox, as its webhook carries it.
type OutboxEvent struct {
	ID        string
	Type      string         `json:"type"`
	Timestamp string         `json:"timestamp"`
	Data      map[string]any `json:"data"`
	// Actor is set only for a change made through an impersonation.
	Actor map[string]any `json:"actor"`
}

// DrainEvents takes every event waiting in app's outbox, oldest first, and
// removes them, checking each payload's shape.
func DrainEvents(t testing.TB, app *App) []OutboxEvent {
	t.Helper()
	var out []OutboxEvent
	for {
		msgs, err := app.App.Outbox.Claim(t.Context(), ports.OutboxEvents, app.Clock.Now(), time.Minute, 100)
		if err != nil {
			t.Fatalf("claim events: %v", err)
		}
		for _, m := range msgs {
			var keys map[string]json.RawMessage
			MustUnmarshal(t, m.Payload, &keys)
			want := []string{"data", "timestamp", "type"}
			if _, ok := keys["actor"]; ok {
				want = []string{"actor", "data", "timestamp", "type"}
			}
			if got := slices.Sorted(maps.Keys(keys)); !slices.Equal(got, want) {
				t.Fatalf("payload %s has keys %v, want data, timestamp, type (and actor, for an impersonation)", m.Payload, got)
			}
			e := OutboxEvent{ID: m.ID}
			MustUnmarshal(t, m.Payload, &e)
			if e.Type != m.Type || !strings.HasPrefix(m.ID, "msg_") {
				t.Fatalf("message %s of type %s carries %s", m.ID, m.Type, m.Payload)
			}
			if _, err := time.Parse(time.RFC3339, e.Timestamp); err != nil {
				t.Fatalf("timestamp %q is not RFC 3339", e.Timestamp)
			}
			if err := app.App.Outbox.Done(t.Context(), m.ID); err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
		if len(msgs) < 100 {
			return out
		}
	}
}
