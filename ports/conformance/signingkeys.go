package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// RunSigningKeyRepository runs the SigningKeyRepository contract, each case
// on the fresh, empty repository newRepo returns.
func RunSigningKeyRepository(t *testing.T, newRepo func(t *testing.T) ports.SigningKeyRepository) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, r ports.SigningKeyRepository)
	}{
		{"create_then_list_round_trips_every_field", testSigningKeyRoundTrip},
		{"sealed_bytes_of_every_value_round_trip", testSigningKeyBinary},
		{"taken_id_is_conflict", testSigningKeyDuplicate},
		{"list_is_oldest_first_with_ties_by_id", testSigningKeyListOrder},
		{"retire_sets_the_time_once", testSigningKeyRetire},
		{"retire_moves_a_scheduled_retirement_earlier_only", testSigningKeyRetireEarlier},
		{"activation_time_round_trips_apart_from_creation", testSigningKeyActivation},
		{"retire_of_a_missing_key_is_not_found", testSigningKeyRetireMissing},
		{"delete_retired_before_removes_only_keys_retired_earlier", testSigningKeyDeleteRetired},
		{"concurrent_creates_are_all_kept", testSigningKeyParallel},
		{"returned_values_are_copies", testSigningKeyCopies},
	}
	for _, tt := range tests {
		t.Run("contract=SigningKeyRepository/"+tt.name, func(t *testing.T) {
			tt.fn(t, newRepo(t))
		})
	}
}

// signingKeyAt returns a key named id created at at, with a JWK naming it
// and sealed bytes of its own.
func signingKeyAt(id string, alg domain.SigningAlgorithm, at time.Time) domain.SigningKey {
	return domain.SigningKey{
		ID: domain.SigningKeyID(id), Alg: alg,
		PublicJWK:     []byte(fmt.Sprintf(`{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":%q,"alg":%q,"use":"sig"}`, id, alg)),
		SealedPrivate: append([]byte{1, 0, 0xff}, id...),
		CreatedAt:     at,
		ActivatesAt:   at,
	}
}

func mustCreateSigningKey(t *testing.T, r ports.SigningKeyRepository, k domain.SigningKey) {
	t.Helper()
	if err := r.Create(context.Background(), k); err != nil {
		t.Fatalf("Create %s: %v", k.ID, err)
	}
}

func mustListSigningKeys(t *testing.T, r ports.SigningKeyRepository) []domain.SigningKey {
	t.Helper()
	keys, err := r.List(context.Background())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return keys
}

func sameSigningKey(t *testing.T, got, want domain.SigningKey) {
	t.Helper()
	if got.ID != want.ID || got.Alg != want.Alg || !bytes.Equal(got.PublicJWK, want.PublicJWK) || !bytes.Equal(got.SealedPrivate, want.SealedPrivate) ||
		!got.CreatedAt.Equal(want.CreatedAt) || !got.ActivatesAt.Equal(want.ActivatesAt) ||
		!got.RetiredAt.Equal(want.RetiredAt) || got.RetiredAt.IsZero() != want.RetiredAt.IsZero() {
		t.Fatalf("key = %+v\nwant %+v", got, want)
	}
}

func testSigningKeyRoundTrip(t *testing.T, r ports.SigningKeyRepository) {
	// A non-UTC time comes back as the same instant.
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.FixedZone("CET", 3600))
	k := signingKeyAt("k1", domain.AlgRS256, at)
	mustCreateSigningKey(t, r, k)
	keys := mustListSigningKeys(t, r)
	if len(keys) != 1 {
		t.Fatalf("List = %d keys, want 1", len(keys))
	}
	sameSigningKey(t, keys[0], k)
	if keys[0].CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt location = %v, want UTC", keys[0].CreatedAt.Location())
	}
}

func testSigningKeyBinary(t *testing.T, r ports.SigningKeyRepository) {
	k := signingKeyAt("k1", domain.AlgEdDSA, time.Now())
	k.SealedPrivate = make([]byte, 256)
	for i := range k.SealedPrivate {
		k.SealedPrivate[i] = byte(i)
	}
	k.CreatedAt = domain.Timestamp(k.CreatedAt)
	k.ActivatesAt = k.CreatedAt
	mustCreateSigningKey(t, r, k)
	sameSigningKey(t, mustListSigningKeys(t, r)[0], k)
}

func testSigningKeyDuplicate(t *testing.T, r ports.SigningKeyRepository) {
	now := domain.Timestamp(time.Now())
	mustCreateSigningKey(t, r, signingKeyAt("k1", domain.AlgEdDSA, now))
	err := r.Create(context.Background(), signingKeyAt("k1", domain.AlgRS256, now))
	if domain.KindOf(err) != domain.KindConflict {
		t.Fatalf("second Create = %v, want a conflict", err)
	}
	if keys := mustListSigningKeys(t, r); len(keys) != 1 || keys[0].Alg != domain.AlgEdDSA {
		t.Fatalf("after the conflict: %+v", keys)
	}
}

func testSigningKeyListOrder(t *testing.T, r ports.SigningKeyRepository) {
	base := domain.Timestamp(time.Now())
	// Inserted out of order; "b" and "a" share a time, so the id decides.
	for _, k := range []domain.SigningKey{
		signingKeyAt("c", domain.AlgEdDSA, base.Add(2*time.Second)),
		signingKeyAt("b", domain.AlgRS256, base),
		signingKeyAt("a", domain.AlgEdDSA, base),
		signingKeyAt("Z", domain.AlgEdDSA, base.Add(time.Second)),
	} {
		mustCreateSigningKey(t, r, k)
	}
	var got []domain.SigningKeyID
	for _, k := range mustListSigningKeys(t, r) {
		got = append(got, k.ID)
	}
	if want := []domain.SigningKeyID{"a", "b", "Z", "c"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func testSigningKeyRetire(t *testing.T, r ports.SigningKeyRepository) {
	now := domain.Timestamp(time.Now())
	mustCreateSigningKey(t, r, signingKeyAt("old", domain.AlgEdDSA, now))
	mustCreateSigningKey(t, r, signingKeyAt("other", domain.AlgEdDSA, now))
	ctx := context.Background()
	first := now.Add(time.Minute)
	if err := r.Retire(ctx, "old", first); err != nil {
		t.Fatalf("Retire: %v", err)
	}
	if err := r.Retire(ctx, "old", first.Add(time.Hour)); err != nil {
		t.Fatalf("Retire again: %v", err)
	}
	for _, k := range mustListSigningKeys(t, r) {
		switch {
		case k.ID == "old" && !k.RetiredAt.Equal(first):
			t.Errorf("RetiredAt = %v, want the first retirement %v", k.RetiredAt, first)
		case k.ID == "other" && !k.RetiredAt.IsZero():
			t.Errorf("the other key was retired: %v", k.RetiredAt)
		}
	}
}

func testSigningKeyRetireEarlier(t *testing.T, r ports.SigningKeyRepository) {
	ctx := context.Background()
	now := domain.Timestamp(time.Now())
	mustCreateSigningKey(t, r, signingKeyAt("old", domain.AlgEdDSA, now))
	scheduled := now.Add(2 * time.Minute) // a calm rotation retires it when its successor activates
	for _, at := range []time.Time{scheduled, scheduled.Add(time.Hour)} {
		if err := r.Retire(ctx, "old", at); err != nil {
			t.Fatalf("Retire at %v: %v", at, err)
		}
	}
	if got := mustListSigningKeys(t, r)[0].RetiredAt; !got.Equal(scheduled) {
		t.Fatalf("RetiredAt = %v, want the scheduled %v (a later retirement changes nothing)", got, scheduled)
	}
	// A rotation in a hurry retires it now.
	if err := r.Retire(ctx, "old", now.Add(time.Second)); err != nil {
		t.Fatalf("Retire earlier: %v", err)
	}
	if got := mustListSigningKeys(t, r)[0].RetiredAt; !got.Equal(now.Add(time.Second)) {
		t.Fatalf("RetiredAt = %v, want it brought forward to %v", got, now.Add(time.Second))
	}
}

func testSigningKeyActivation(t *testing.T, r ports.SigningKeyRepository) {
	now := domain.Timestamp(time.Now())
	k := signingKeyAt("pending", domain.AlgEdDSA, now)
	k.ActivatesAt = time.Date(2030, 1, 2, 3, 4, 5, 678901000, time.FixedZone("EST", -5*3600))
	mustCreateSigningKey(t, r, k)
	got := mustListSigningKeys(t, r)[0]
	sameSigningKey(t, got, k)
	if got.ActivatesAt.Location() != time.UTC {
		t.Errorf("ActivatesAt location = %v, want UTC", got.ActivatesAt.Location())
	}
}

func testSigningKeyRetireMissing(t *testing.T, r ports.SigningKeyRepository) {
	err := r.Retire(context.Background(), "missing", time.Now())
	var de *domain.Error
	if !errors.Is(err, domain.ErrNotFound) || !errors.As(err, &de) || de.Code != domain.ErrSigningKeyNotFound.Code {
		t.Fatalf("Retire missing = %v, want %v", err, domain.ErrSigningKeyNotFound)
	}
}

func testSigningKeyDeleteRetired(t *testing.T, r ports.SigningKeyRepository) {
	ctx := context.Background()
	now := domain.Timestamp(time.Now())
	for _, id := range []string{"active", "long-ago", "at-cutoff", "recent"} {
		mustCreateSigningKey(t, r, signingKeyAt(id, domain.AlgRS256, now.Add(-48*time.Hour)))
	}
	cutoff := now.Add(-time.Hour)
	for id, at := range map[domain.SigningKeyID]time.Time{"long-ago": now.Add(-24 * time.Hour), "at-cutoff": cutoff, "recent": now} {
		if err := r.Retire(ctx, id, at); err != nil {
			t.Fatal(err)
		}
	}
	n, err := r.DeleteRetiredBefore(ctx, cutoff)
	if err != nil || n != 1 {
		t.Fatalf("DeleteRetiredBefore = %d, %v; want 1", n, err)
	}
	var left []domain.SigningKeyID
	for _, k := range mustListSigningKeys(t, r) {
		left = append(left, k.ID)
	}
	if len(left) != 3 || fmt.Sprint(left) != "[active at-cutoff recent]" {
		t.Fatalf("left = %v, want [active at-cutoff recent]", left)
	}
}

func testSigningKeyParallel(t *testing.T, r ports.SigningKeyRepository) {
	now := domain.Timestamp(time.Now())
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Go(func() {
			errs <- r.Create(context.Background(), signingKeyAt(fmt.Sprintf("k%02d", i), domain.AlgEdDSA, now))
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if keys := mustListSigningKeys(t, r); len(keys) != 20 {
		t.Fatalf("List = %d keys, want 20", len(keys))
	}
}

func testSigningKeyCopies(t *testing.T, r ports.SigningKeyRepository) {
	k := signingKeyAt("k1", domain.AlgEdDSA, domain.Timestamp(time.Now()))
	mustCreateSigningKey(t, r, k)
	// Mutating what was passed in, or what came back, changes nothing stored.
	k.PublicJWK[0], k.SealedPrivate[0] = 'X', 'X'
	got := mustListSigningKeys(t, r)[0]
	got.PublicJWK[1], got.SealedPrivate[1] = 'Y', 'Y'
	again := mustListSigningKeys(t, r)[0]
	if again.PublicJWK[0] != '{' || again.PublicJWK[1] != '"' || again.SealedPrivate[0] != 1 || again.SealedPrivate[1] != 0 {
		t.Fatalf("stored key changed through a copy: %s %v", again.PublicJWK, again.SealedPrivate[:2])
	}
}
