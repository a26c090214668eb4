package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// RunServiceKeyRepository runs the ServiceKeyRepository contract. newStores
// must return empty repositories sharing one fresh database each time it is
// called; only ServiceKeys is used.
func RunServiceKeyRepository(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, repo ports.ServiceKeyRepository)
	}{
		{"create_then_get_round_trips", testServiceKeyRoundTrip},
		{"key_without_expiry_round_trips_zero_times", testServiceKeyZeroTimes},
		{"missing_key_is_not_found", testServiceKeyNotFound},
		{"duplicate_id_is_conflict", testServiceKeyDuplicateID},
		{"duplicate_secret_hash_is_conflict", testServiceKeyDuplicateSecret},
		{"list_is_newest_first_revoked_included", testServiceKeyList},
		{"rotate_adds_secret_and_expires_older", testServiceKeyRotate},
		{"rotate_keeps_only_the_previous_secret", testServiceKeyRotateKeepsOnlyThePrevious},
		{"rotate_with_zero_expiry_deletes_older_secrets", testServiceKeyRotateDeletesOlder},
		{"rotate_rolls_back_when_fn_fails", testServiceKeyRotateRollback},
		{"rotate_with_taken_hash_is_conflict", testServiceKeyRotateConflict},
		{"rotate_of_missing_or_revoked_key_is_not_found", testServiceKeyRotateNotFound},
		{"concurrent_rotations_leave_one_newest_secret", testServiceKeyRotateParallel},
		{"expired_overlap_secret_is_still_returned", testServiceKeyExpiredSecretReturned},
		{"revoke_deletes_secrets_and_marks_the_key", testServiceKeyRevoke},
		{"revoke_twice_is_not_found", testServiceKeyRevokeTwice},
		{"touch_last_used_never_moves_backwards", testServiceKeyTouch},
		{"touch_last_used_ignores_unknown_ids", testServiceKeyTouchUnknown},
		{"concurrent_touches_keep_the_latest_time", testServiceKeyTouchParallel},
		{"delete_expired_secrets_removes_only_expired", testServiceKeyDeleteExpired},
		{"returned_values_are_copies", testServiceKeyCopies},
	}
	for _, tt := range tests {
		t.Run("contract=ServiceKeyRepository/"+tt.name, func(t *testing.T) {
			tt.fn(t, newStores(t).ServiceKeys)
		})
	}
}

// keySecret returns the n-th secret of key id; its last four characters are
// n in four digits.
func keySecret(id string, n int) string {
	return fmt.Sprintf("%s%s_secret_%04d", domain.ServiceKeyPrefix, id, n)
}

func keySecretHash(id string, n int) domain.TokenHash { return domain.HashToken(keySecret(id, n)) }

// makeServiceKey returns key id with every scope but *, created at
// createdAt with its first secret keySecret(id, 1), and that secret.
func makeServiceKey(t *testing.T, id string, createdAt time.Time) (*domain.ServiceKey, domain.ServiceKeySecret) {
	t.Helper()
	k, err := domain.NewServiceKey(domain.ServiceKeyID(id), "Key "+id,
		[]domain.Scope{domain.ScopeUsersRead, domain.ScopeUsersWrite}, keySecret(id, 1), "cli", time.Time{}, createdAt)
	if err != nil {
		t.Fatal(err)
	}
	return k, domain.ServiceKeySecret{Hash: keySecretHash(id, 1), KeyID: k.ID(), CreatedAt: createdAt}
}

func mustCreateServiceKey(t *testing.T, repo ports.ServiceKeyRepository, id string, createdAt time.Time) *domain.ServiceKey {
	t.Helper()
	k, secret := makeServiceKey(t, id, createdAt)
	if err := repo.Create(context.Background(), k, secret); err != nil {
		t.Fatalf("Create service key %s: %v", id, err)
	}
	return k
}

func mustGetServiceKey(t *testing.T, repo ports.ServiceKeyRepository, id string) *domain.ServiceKey {
	t.Helper()
	k, err := repo.Get(context.Background(), domain.ServiceKeyID(id))
	if err != nil {
		t.Fatalf("Get service key %s: %v", id, err)
	}
	return k
}

func mustGetBySecret(t *testing.T, repo ports.ServiceKeyRepository, h domain.TokenHash) (*domain.ServiceKey, domain.ServiceKeySecret) {
	t.Helper()
	k, s, err := repo.GetBySecretHash(context.Background(), h)
	if err != nil {
		t.Fatalf("GetBySecretHash(%s): %v", h, err)
	}
	if s.Hash != h || s.KeyID != k.ID() {
		t.Fatalf("GetBySecretHash(%s) = secret %s of %s with key %s", h, s.Hash, s.KeyID, k.ID())
	}
	return k, s
}

func assertSecretGone(t *testing.T, repo ports.ServiceKeyRepository, h domain.TokenHash) {
	t.Helper()
	_, _, err := repo.GetBySecretHash(context.Background(), h)
	mustBeKind(t, err, domain.ErrNotFound)
}

// rotateTo rotates key id to its n-th secret, created at createdAt, giving
// the older secrets oldExpiresAt, and records the secret's last four.
func rotateTo(repo ports.ServiceKeyRepository, id string, n int, createdAt, oldExpiresAt time.Time) error {
	secret := domain.ServiceKeySecret{Hash: keySecretHash(id, n), KeyID: domain.ServiceKeyID(id), CreatedAt: createdAt}
	return repo.Rotate(context.Background(), domain.ServiceKeyID(id), secret, oldExpiresAt, func(k *domain.ServiceKey) error {
		k.SetSecret(keySecret(id, n))
		return nil
	})
}

func mustRotate(t *testing.T, repo ports.ServiceKeyRepository, id string, n int, createdAt, oldExpiresAt time.Time) {
	t.Helper()
	if err := rotateTo(repo, id, n, createdAt, oldExpiresAt); err != nil {
		t.Fatalf("Rotate %s to secret %d: %v", id, n, err)
	}
}

func assertSameServiceKey(t *testing.T, got, want *domain.ServiceKey) {
	t.Helper()
	if got.ID() != want.ID() || got.Name() != want.Name() || !slices.Equal(got.Scopes(), want.Scopes()) ||
		got.Last4() != want.Last4() || got.CreatedBy() != want.CreatedBy() {
		t.Fatalf("service key mismatch:\n got  %s\n want %s", describeServiceKey(got), describeServiceKey(want))
	}
	assertTime(t, "ExpiresAt", got.ExpiresAt(), want.ExpiresAt())
	assertTime(t, "CreatedAt", got.CreatedAt(), want.CreatedAt())
	assertTime(t, "LastUsedAt", got.LastUsedAt(), want.LastUsedAt())
	assertTime(t, "RevokedAt", got.RevokedAt(), want.RevokedAt())
}

func describeServiceKey(k *domain.ServiceKey) string {
	return fmt.Sprintf("{id=%s name=%q scopes=%v last4=%q by=%q expires=%s created=%s used=%s revoked=%s}",
		k.ID(), k.Name(), k.Scopes(), k.Last4(), k.CreatedBy(), k.ExpiresAt().Format(time.RFC3339Nano),
		k.CreatedAt().Format(time.RFC3339Nano), k.LastUsedAt().Format(time.RFC3339Nano), k.RevokedAt().Format(time.RFC3339Nano))
}

// assertSecret fails unless secret h of key id is stored with expiresAt and
// createdAt.
func assertSecret(t *testing.T, repo ports.ServiceKeyRepository, h domain.TokenHash, id string, expiresAt, createdAt time.Time) {
	t.Helper()
	k, s := mustGetBySecret(t, repo, h)
	if k.ID() != domain.ServiceKeyID(id) {
		t.Fatalf("secret %s leads to key %s, want %s", h, k.ID(), id)
	}
	assertTime(t, "secret ExpiresAt", s.ExpiresAt, expiresAt)
	assertTime(t, "secret CreatedAt", s.CreatedAt, createdAt)
}

func serviceKeyIDs(t *testing.T, repo ports.ServiceKeyRepository) []domain.ServiceKeyID {
	t.Helper()
	list, err := repo.List(context.Background())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	ids := make([]domain.ServiceKeyID, 0, len(list))
	for _, k := range list {
		ids = append(ids, k.ID())
	}
	return ids
}

func testServiceKeyRoundTrip(t *testing.T, repo ports.ServiceKeyRepository) {
	ctx := context.Background()
	// Non-UTC instants with nanoseconds: they must come back as the same
	// instants at microsecond precision, in UTC.
	zone := time.FixedZone("UTC+5:30", 5*60*60+30*60)
	created := time.Date(2026, 7, 8, 9, 10, 11, 654321987, zone)
	expires := created.Add(90*24*time.Hour + 123*time.Nanosecond)
	scopes := []domain.Scope{domain.ScopeOrganizationsWrite, domain.ScopeAll, domain.ScopeUsersRead}
	k, err := domain.NewServiceKey("k1", "Billing backend ✓", scopes, keySecret("k1", 7), "user:u1", expires, created)
	if err != nil {
		t.Fatal(err)
	}
	secret := domain.ServiceKeySecret{Hash: keySecretHash("k1", 7), KeyID: "k1", CreatedAt: created}
	if err := repo.Create(ctx, k, secret); err != nil {
		t.Fatal(err)
	}

	got := mustGetServiceKey(t, repo, "k1")
	assertSameServiceKey(t, got, k)
	assertTime(t, "CreatedAt", got.CreatedAt(), created.Truncate(time.Microsecond))
	assertTime(t, "ExpiresAt", got.ExpiresAt(), expires.Truncate(time.Microsecond))
	if got.Last4() != "0007" || !slices.Equal(got.Scopes(), scopes) {
		t.Fatalf("Last4 = %q, Scopes = %v; want 0007, %v", got.Last4(), got.Scopes(), scopes)
	}

	byHash, s := mustGetBySecret(t, repo, secret.Hash)
	assertSameServiceKey(t, byHash, k)
	assertTime(t, "secret ExpiresAt", s.ExpiresAt, time.Time{})
	assertTime(t, "secret CreatedAt", s.CreatedAt, created.Truncate(time.Microsecond))

	list, err := repo.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %d keys, %v; want 1", len(list), err)
	}
	assertSameServiceKey(t, list[0], k)
}

func testServiceKeyZeroTimes(t *testing.T, repo ports.ServiceKeyRepository) {
	k := mustCreateServiceKey(t, repo, "k1", baseTime)
	got := mustGetServiceKey(t, repo, "k1")
	assertSameServiceKey(t, got, k)
	if !got.ExpiresAt().IsZero() || !got.LastUsedAt().IsZero() || !got.RevokedAt().IsZero() {
		t.Fatalf("unset times came back set: %s", describeServiceKey(got))
	}
	if !got.IsActive(baseTime.Add(100 * 365 * 24 * time.Hour)) {
		t.Fatal("a key without expiry is not active a century later")
	}
}

func testServiceKeyNotFound(t *testing.T, repo ports.ServiceKeyRepository) {
	ctx := context.Background()
	mustCreateServiceKey(t, repo, "k1", baseTime)
	_, err := repo.Get(ctx, "nothing")
	mustBeKind(t, err, domain.ErrNotFound)
	assertSecretGone(t, repo, domain.HashToken("nothing"))
	assertSecretGone(t, repo, "")
	mustBeKind(t, repo.Revoke(ctx, "nothing", baseTime), domain.ErrNotFound)
	if ids := serviceKeyIDs(t, repo); !slices.Equal(ids, []domain.ServiceKeyID{"k1"}) {
		t.Fatalf("List = %v, want [k1]", ids)
	}
}

func testServiceKeyDuplicateID(t *testing.T, repo ports.ServiceKeyRepository) {
	first := mustCreateServiceKey(t, repo, "k1", baseTime)
	dup, err := domain.NewServiceKey("k1", "Impostor", []domain.Scope{domain.ScopeAll}, keySecret("k1", 2), "cli", time.Time{}, baseTime.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	err = repo.Create(context.Background(), dup, domain.ServiceKeySecret{Hash: keySecretHash("k1", 2), KeyID: "k1", CreatedAt: baseTime})
	mustBeKind(t, err, domain.ErrConflict)
	// Nothing of the failed create is left: not its secret, not its fields.
	assertSecretGone(t, repo, keySecretHash("k1", 2))
	assertSameServiceKey(t, mustGetServiceKey(t, repo, "k1"), first)
}

func testServiceKeyDuplicateSecret(t *testing.T, repo ports.ServiceKeyRepository) {
	ctx := context.Background()
	first := mustCreateServiceKey(t, repo, "k1", baseTime)
	k2, _ := makeServiceKey(t, "k2", baseTime)
	err := repo.Create(ctx, k2, domain.ServiceKeySecret{Hash: keySecretHash("k1", 1), KeyID: "k2", CreatedAt: baseTime})
	mustBeKind(t, err, domain.ErrConflict)
	// The key and its secret are created together or not at all.
	_, err = repo.Get(ctx, "k2")
	mustBeKind(t, err, domain.ErrNotFound)
	got, _ := mustGetBySecret(t, repo, keySecretHash("k1", 1))
	assertSameServiceKey(t, got, first)
	if ids := serviceKeyIDs(t, repo); !slices.Equal(ids, []domain.ServiceKeyID{"k1"}) {
		t.Fatalf("List = %v, want [k1]", ids)
	}
}

func testServiceKeyList(t *testing.T, repo ports.ServiceKeyRepository) {
	mustCreateServiceKey(t, repo, "old", baseTime)
	mustCreateServiceKey(t, repo, "new", baseTime.Add(time.Hour))
	mustCreateServiceKey(t, repo, "tie_a", baseTime.Add(time.Minute))
	mustCreateServiceKey(t, repo, "tie_b", baseTime.Add(time.Minute))
	mustCreateServiceKey(t, repo, "revoked", baseTime.Add(2*time.Minute))
	if err := repo.Revoke(context.Background(), "revoked", baseTime.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	want := []domain.ServiceKeyID{"new", "revoked", "tie_b", "tie_a", "old"}
	if got := serviceKeyIDs(t, repo); !slices.Equal(got, want) {
		t.Fatalf("List = %v, want %v (newest first, ties by id descending)", got, want)
	}
}

func testServiceKeyRotate(t *testing.T, repo ports.ServiceKeyRepository) {
	zone := time.FixedZone("UTC-7", -7*60*60)
	mustCreateServiceKey(t, repo, "k1", baseTime)
	mustCreateServiceKey(t, repo, "k2", baseTime)
	rotated := baseTime.Add(time.Hour).In(zone)
	overlap := rotated.Add(24*time.Hour + 999*time.Nanosecond)
	mustRotate(t, repo, "k1", 2, rotated, overlap)

	// The old secret still works until the overlap ends; the new one has no
	// expiry; the key shows the new secret's last four.
	assertSecret(t, repo, keySecretHash("k1", 1), "k1", overlap.Truncate(time.Microsecond), baseTime)
	assertSecret(t, repo, keySecretHash("k1", 2), "k1", time.Time{}, rotated.Truncate(time.Microsecond))
	if got := mustGetServiceKey(t, repo, "k1"); got.Last4() != "0002" {
		t.Fatalf("Last4 after rotation = %q, want 0002", got.Last4())
	}
	// Another key's secrets are untouched.
	assertSecret(t, repo, keySecretHash("k2", 1), "k2", time.Time{}, baseTime)
	if got := mustGetServiceKey(t, repo, "k2"); got.Last4() != "0001" {
		t.Fatalf("k2 Last4 = %q, want 0001", got.Last4())
	}
}

func testServiceKeyRotateKeepsOnlyThePrevious(t *testing.T, repo ports.ServiceKeyRepository) {
	mustCreateServiceKey(t, repo, "k1", baseTime)
	mustCreateServiceKey(t, repo, "k2", baseTime)
	soon := baseTime.Add(time.Hour)
	mustRotate(t, repo, "k1", 2, baseTime, soon)
	// A second rotation within the overlap deletes secret 1: only the
	// newest until then (secret 2) lives on through the new overlap.
	later := baseTime.Add(48 * time.Hour)
	mustRotate(t, repo, "k1", 3, baseTime.Add(time.Minute), later)
	assertSecretGone(t, repo, keySecretHash("k1", 1))
	assertSecret(t, repo, keySecretHash("k1", 2), "k1", later, baseTime)
	assertSecret(t, repo, keySecretHash("k1", 3), "k1", time.Time{}, baseTime.Add(time.Minute))
	sooner := baseTime.Add(30 * time.Minute)
	mustRotate(t, repo, "k1", 4, baseTime.Add(2*time.Minute), sooner)
	assertSecretGone(t, repo, keySecretHash("k1", 2))
	assertSecret(t, repo, keySecretHash("k1", 3), "k1", sooner, baseTime.Add(time.Minute))
	assertSecret(t, repo, keySecretHash("k1", 4), "k1", time.Time{}, baseTime.Add(2*time.Minute))
	// Another key's secrets are not touched.
	assertSecret(t, repo, keySecretHash("k2", 1), "k2", time.Time{}, baseTime)
}

func testServiceKeyRotateDeletesOlder(t *testing.T, repo ports.ServiceKeyRepository) {
	mustCreateServiceKey(t, repo, "k1", baseTime)
	mustCreateServiceKey(t, repo, "k2", baseTime)
	mustRotate(t, repo, "k1", 2, baseTime, baseTime.Add(time.Hour))
	mustRotate(t, repo, "k1", 3, baseTime.Add(time.Minute), time.Time{})
	assertSecretGone(t, repo, keySecretHash("k1", 1))
	assertSecretGone(t, repo, keySecretHash("k1", 2))
	assertSecret(t, repo, keySecretHash("k1", 3), "k1", time.Time{}, baseTime.Add(time.Minute))
	assertSecret(t, repo, keySecretHash("k2", 1), "k2", time.Time{}, baseTime)
	if got := mustGetServiceKey(t, repo, "k1"); got.Last4() != "0003" {
		t.Fatalf("Last4 = %q, want 0003", got.Last4())
	}
}

func testServiceKeyRotateRollback(t *testing.T, repo ports.ServiceKeyRepository) {
	for _, oldExpiresAt := range []time.Time{baseTime.Add(time.Hour), {}} {
		t.Run(fmt.Sprintf("old_expires_zero=%v", oldExpiresAt.IsZero()), func(t *testing.T) {
			id := fmt.Sprintf("k%v", oldExpiresAt.IsZero())
			want := mustCreateServiceKey(t, repo, id, baseTime)
			boom := errors.New("boom")
			secret := domain.ServiceKeySecret{Hash: keySecretHash(id, 2), KeyID: domain.ServiceKeyID(id), CreatedAt: baseTime}
			err := repo.Rotate(context.Background(), domain.ServiceKeyID(id), secret, oldExpiresAt, func(k *domain.ServiceKey) error {
				k.SetSecret(keySecret(id, 2))
				k.Revoke(baseTime)
				return boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("Rotate error = %v, want the fn's error", err)
			}
			assertSecretGone(t, repo, secret.Hash)
			assertSecret(t, repo, keySecretHash(id, 1), id, time.Time{}, baseTime)
			assertSameServiceKey(t, mustGetServiceKey(t, repo, id), want)
		})
	}
}

func testServiceKeyRotateConflict(t *testing.T, repo ports.ServiceKeyRepository) {
	want := mustCreateServiceKey(t, repo, "k1", baseTime)
	mustCreateServiceKey(t, repo, "k2", baseTime)
	for _, taken := range []domain.TokenHash{keySecretHash("k2", 1), keySecretHash("k1", 1)} {
		// A zero oldExpiresAt would delete k1's secret 1, were the rotation
		// not refused as a whole.
		secret := domain.ServiceKeySecret{Hash: taken, KeyID: "k1", CreatedAt: baseTime}
		err := repo.Rotate(context.Background(), "k1", secret, time.Time{}, func(k *domain.ServiceKey) error {
			k.SetSecret("xxxx9999")
			return nil
		})
		mustBeKind(t, err, domain.ErrConflict)
	}
	// Neither the old secret's deletion nor fn's change persisted.
	assertSecret(t, repo, keySecretHash("k1", 1), "k1", time.Time{}, baseTime)
	assertSecret(t, repo, keySecretHash("k2", 1), "k2", time.Time{}, baseTime)
	assertSameServiceKey(t, mustGetServiceKey(t, repo, "k1"), want)
}

func testServiceKeyRotateNotFound(t *testing.T, repo ports.ServiceKeyRepository) {
	mustCreateServiceKey(t, repo, "k1", baseTime)
	if err := repo.Revoke(context.Background(), "k1", baseTime.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []domain.ServiceKeyID{"k1", "nothing"} {
		called := false
		secret := domain.ServiceKeySecret{Hash: keySecretHash(string(id), 9), KeyID: id, CreatedAt: baseTime}
		err := repo.Rotate(context.Background(), id, secret, baseTime.Add(time.Hour), func(*domain.ServiceKey) error {
			called = true
			return nil
		})
		mustBeKind(t, err, domain.ErrNotFound)
		if called {
			t.Fatalf("fn was called for key %s", id)
		}
		assertSecretGone(t, repo, secret.Hash)
	}
	if got := mustGetServiceKey(t, repo, "k1"); got.Last4() != "0001" || got.RevokedAt().IsZero() {
		t.Fatalf("revoked key changed: %s", describeServiceKey(got))
	}
}

func testServiceKeyRotateParallel(t *testing.T, repo ports.ServiceKeyRepository) {
	mustCreateServiceKey(t, repo, "k1", baseTime)
	const workers = 12
	overlap := baseTime.Add(time.Hour)
	// Every rotation deletes the secrets rotated out before it and gives
	// the newest until then an expiry. Had two run interleaved, each would
	// miss the other's secret, and two secrets would be left without one,
	// or more than two alive.
	errs := runParallel(workers, func(i int) error {
		return rotateTo(repo, "k1", i+2, baseTime.Add(time.Duration(i)*time.Second), overlap)
	})
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Rotate: %v", err)
		}
	}
	var newest, previous []int
	for n := 1; n <= workers+1; n++ {
		_, s, err := repo.GetBySecretHash(context.Background(), keySecretHash("k1", n))
		switch {
		case errors.Is(err, domain.ErrNotFound):
		case err != nil:
			t.Fatalf("GetBySecretHash(secret %d): %v", n, err)
		case s.ExpiresAt.IsZero():
			newest = append(newest, n)
		default:
			assertTime(t, fmt.Sprintf("secret %d ExpiresAt", n), s.ExpiresAt, overlap)
			previous = append(previous, n)
		}
	}
	if len(newest) != 1 || len(previous) != 1 {
		t.Fatalf("after %d concurrent rotations: newest %v and previous %v, want exactly one of each", workers, newest, previous)
	}
	// The key records the last four of the rotation that won.
	if got, want := mustGetServiceKey(t, repo, "k1").Last4(), fmt.Sprintf("%04d", newest[0]); got != want {
		t.Fatalf("Last4 = %q, but the newest secret is %s", got, want)
	}
}

func testServiceKeyExpiredSecretReturned(t *testing.T, repo ports.ServiceKeyRepository) {
	mustCreateServiceKey(t, repo, "k1", baseTime)
	overlapEnd := baseTime.Add(time.Minute)
	mustRotate(t, repo, "k1", 2, baseTime, overlapEnd)
	// Long after the overlap, and before any cleanup, the old secret is still
	// returned with its expiry: checking it is the caller's job.
	now := baseTime.Add(24 * time.Hour)
	k, s := mustGetBySecret(t, repo, keySecretHash("k1", 1))
	assertTime(t, "secret ExpiresAt", s.ExpiresAt, overlapEnd)
	if s.IsActive(now) || !k.IsActive(now) {
		t.Fatalf("secret active = %v, key active = %v at %s; want false, true", s.IsActive(now), k.IsActive(now), now)
	}
}

func testServiceKeyRevoke(t *testing.T, repo ports.ServiceKeyRepository) {
	ctx := context.Background()
	mustCreateServiceKey(t, repo, "k1", baseTime)
	mustCreateServiceKey(t, repo, "k2", baseTime)
	mustRotate(t, repo, "k1", 2, baseTime, baseTime.Add(time.Hour))
	revokedAt := time.Date(2026, 3, 4, 12, 0, 0, 777777777, time.FixedZone("UTC+1", 60*60))
	if err := repo.Revoke(ctx, "k1", revokedAt); err != nil {
		t.Fatal(err)
	}
	// Both the newest secret and the one still in its overlap stop working.
	assertSecretGone(t, repo, keySecretHash("k1", 1))
	assertSecretGone(t, repo, keySecretHash("k1", 2))
	got := mustGetServiceKey(t, repo, "k1")
	assertTime(t, "RevokedAt", got.RevokedAt(), revokedAt.Truncate(time.Microsecond))
	if got.IsActive(baseTime) {
		t.Fatal("a revoked key is active")
	}
	assertSecret(t, repo, keySecretHash("k2", 1), "k2", time.Time{}, baseTime)
	// Nothing is deleted for cleanup to count, and the id stays taken.
	if n, err := repo.DeleteExpiredSecrets(ctx, baseTime.Add(48*time.Hour)); err != nil || n != 0 {
		t.Fatalf("DeleteExpiredSecrets after revoke = %d, %v; want 0, nil", n, err)
	}
	k, secret := makeServiceKey(t, "k1", baseTime)
	secret.Hash = keySecretHash("k1", 3)
	mustBeKind(t, repo.Create(ctx, k, secret), domain.ErrConflict)
}

func testServiceKeyRevokeTwice(t *testing.T, repo ports.ServiceKeyRepository) {
	ctx := context.Background()
	mustCreateServiceKey(t, repo, "k1", baseTime)
	if err := repo.Revoke(ctx, "k1", baseTime.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	mustBeKind(t, repo.Revoke(ctx, "k1", baseTime.Add(time.Hour)), domain.ErrNotFound)
	// The first revocation's time stands.
	assertTime(t, "RevokedAt", mustGetServiceKey(t, repo, "k1").RevokedAt(), baseTime.Add(time.Minute))

	// Of concurrent revocations, exactly one succeeds.
	mustCreateServiceKey(t, repo, "k2", baseTime)
	errs := runParallel(8, func(i int) error { return repo.Revoke(ctx, "k2", baseTime.Add(time.Duration(i)*time.Second)) })
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, domain.ErrNotFound):
			t.Fatalf("concurrent Revoke: %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d of 8 concurrent revocations succeeded, want 1", ok)
	}
}

func testServiceKeyTouch(t *testing.T, repo ports.ServiceKeyRepository) {
	ctx := context.Background()
	mustCreateServiceKey(t, repo, "k1", baseTime)
	mustCreateServiceKey(t, repo, "k2", baseTime)
	mustCreateServiceKey(t, repo, "k3", baseTime)
	zone := time.FixedZone("UTC-3", -3*60*60)
	t1 := baseTime.Add(time.Minute).In(zone)
	t2 := baseTime.Add(2*time.Minute + 555*time.Nanosecond)
	touch := func(used map[domain.ServiceKeyID]time.Time) {
		t.Helper()
		if err := repo.TouchLastUsed(ctx, used); err != nil {
			t.Fatalf("TouchLastUsed(%v): %v", used, err)
		}
	}
	touch(map[domain.ServiceKeyID]time.Time{"k1": t2, "k2": t1})
	touch(map[domain.ServiceKeyID]time.Time{"k1": t1, "k2": t2}) // k1 must not move back
	assertTime(t, "k1 LastUsedAt", mustGetServiceKey(t, repo, "k1").LastUsedAt(), t2.Truncate(time.Microsecond))
	assertTime(t, "k2 LastUsedAt", mustGetServiceKey(t, repo, "k2").LastUsedAt(), t2.Truncate(time.Microsecond))
	assertTime(t, "k3 LastUsedAt", mustGetServiceKey(t, repo, "k3").LastUsedAt(), time.Time{})
	// A time equal to the stored one, at the stored precision, changes nothing.
	touch(map[domain.ServiceKeyID]time.Time{"k1": t2.Truncate(time.Microsecond)})
	assertTime(t, "k1 LastUsedAt", mustGetServiceKey(t, repo, "k1").LastUsedAt(), t2.Truncate(time.Microsecond))
	touch(nil)
	touch(map[domain.ServiceKeyID]time.Time{})

	// Revoked keys keep their last use and may still record one in flight.
	if err := repo.Revoke(ctx, "k3", baseTime.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	touch(map[domain.ServiceKeyID]time.Time{"k3": t1})
	got := mustGetServiceKey(t, repo, "k3")
	assertTime(t, "k3 LastUsedAt", got.LastUsedAt(), t1)
	assertTime(t, "k3 RevokedAt", got.RevokedAt(), baseTime.Add(time.Hour))
}

func testServiceKeyTouchUnknown(t *testing.T, repo ports.ServiceKeyRepository) {
	mustCreateServiceKey(t, repo, "k1", baseTime)
	err := repo.TouchLastUsed(context.Background(), map[domain.ServiceKeyID]time.Time{"ghost": baseTime, "k1": baseTime.Add(time.Second)})
	if err != nil {
		t.Fatalf("TouchLastUsed with an unknown id: %v", err)
	}
	assertTime(t, "k1 LastUsedAt", mustGetServiceKey(t, repo, "k1").LastUsedAt(), baseTime.Add(time.Second))
	_, err = repo.Get(context.Background(), "ghost")
	mustBeKind(t, err, domain.ErrNotFound)
}

func testServiceKeyTouchParallel(t *testing.T, repo ports.ServiceKeyRepository) {
	mustCreateServiceKey(t, repo, "k1", baseTime)
	mustCreateServiceKey(t, repo, "k2", baseTime)
	const workers = 24
	// Batch i touches k1 at i seconds and k2 at workers-i seconds, so the
	// latest times come from different batches, which flush in any order.
	errs := runParallel(workers, func(i int) error {
		return repo.TouchLastUsed(context.Background(), map[domain.ServiceKeyID]time.Time{
			"k1": baseTime.Add(time.Duration(i) * time.Second),
			"k2": baseTime.Add(time.Duration(workers-i) * time.Second),
		})
	})
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent TouchLastUsed: %v", err)
		}
	}
	assertTime(t, "k1 LastUsedAt", mustGetServiceKey(t, repo, "k1").LastUsedAt(), baseTime.Add((workers-1)*time.Second))
	assertTime(t, "k2 LastUsedAt", mustGetServiceKey(t, repo, "k2").LastUsedAt(), baseTime.Add(workers*time.Second))
}

func testServiceKeyDeleteExpired(t *testing.T, repo ports.ServiceKeyRepository) {
	ctx := context.Background()
	now := baseTime.Add(time.Hour)
	// k1: secret 1 expired before now, secret 2 is the newest. k3: secret
	// 1 ends exactly at now. k2: secret 1 is still in its overlap.
	mustCreateServiceKey(t, repo, "k1", baseTime)
	mustRotate(t, repo, "k1", 2, baseTime, now.Add(-time.Minute))
	mustCreateServiceKey(t, repo, "k3", baseTime)
	mustRotate(t, repo, "k3", 2, baseTime, now)
	mustCreateServiceKey(t, repo, "k2", baseTime)
	mustRotate(t, repo, "k2", 2, baseTime, now.Add(time.Microsecond))

	n, err := repo.DeleteExpiredSecrets(ctx, now.In(time.FixedZone("UTC-7", -7*60*60)))
	if err != nil || n != 2 {
		t.Fatalf("DeleteExpiredSecrets = %d, %v; want 2, nil", n, err)
	}
	assertSecretGone(t, repo, keySecretHash("k1", 1))
	assertSecretGone(t, repo, keySecretHash("k3", 1))
	assertSecret(t, repo, keySecretHash("k1", 2), "k1", time.Time{}, baseTime)
	assertSecret(t, repo, keySecretHash("k3", 2), "k3", time.Time{}, baseTime)
	assertSecret(t, repo, keySecretHash("k2", 1), "k2", now.Add(time.Microsecond), baseTime)
	assertSecret(t, repo, keySecretHash("k2", 2), "k2", time.Time{}, baseTime)
	if n, err := repo.DeleteExpiredSecrets(ctx, now); err != nil || n != 0 {
		t.Fatalf("second DeleteExpiredSecrets = %d, %v; want 0, nil", n, err)
	}
}

func testServiceKeyCopies(t *testing.T, repo ports.ServiceKeyRepository) {
	ctx := context.Background()
	orig, secret := makeServiceKey(t, "k1", baseTime)
	want, _ := makeServiceKey(t, "k1", baseTime)
	if err := repo.Create(ctx, orig, secret); err != nil {
		t.Fatal(err)
	}
	orig.SetSecret("changed-after-create") // the caller's value is not the stored one
	orig.Revoke(baseTime)

	got := mustGetServiceKey(t, repo, "k1")
	assertSameServiceKey(t, got, want)
	got.SetSecret("changed-after-get")
	got.Revoke(baseTime)

	byHash, _ := mustGetBySecret(t, repo, secret.Hash)
	assertSameServiceKey(t, byHash, want)
	byHash.Revoke(baseTime)

	list, err := repo.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %d keys, %v; want 1", len(list), err)
	}
	assertSameServiceKey(t, list[0], want)
	list[0].SetSecret("changed-after-list")

	var inFn *domain.ServiceKey
	err = repo.Rotate(ctx, "k1", domain.ServiceKeySecret{Hash: keySecretHash("k1", 2), KeyID: "k1", CreatedAt: baseTime}, time.Time{},
		func(k *domain.ServiceKey) error { inFn = k; return errors.New("no") })
	if err == nil {
		t.Fatal("Rotate with a failing fn succeeded")
	}
	if inFn != nil {
		inFn.SetSecret("changed-in-fn")
	}
	assertSameServiceKey(t, mustGetServiceKey(t, repo, "k1"), want)
}
