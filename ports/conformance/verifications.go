package conformance

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// RunVerificationRepository runs the VerificationRepository contract.
// newStores must return empty repositories sharing one fresh database each
// time it is called.
func RunVerificationRepository(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s Stores)
	}{
		{"create_then_consume_round_trips", testVerificationRoundTrip},
		{"consume_works_once", testVerificationConsumeOnce},
		{"consume_with_another_purpose_is_not_found_and_keeps_the_link", testVerificationWrongPurpose},
		{"concurrent_consumes_have_one_winner", testVerificationConsumeRace},
		{"expired_link_is_consumed", testVerificationConsumeExpired},
		{"missing_link_is_not_found", testVerificationNotFound},
		{"duplicate_id_is_conflict", testVerificationDuplicateID},
		{"duplicate_token_hash_is_conflict", testVerificationDuplicateToken},
		{"unknown_user_is_not_found", testVerificationUnknownUser},
		{"delete_by_user_removes_one_purpose", testVerificationDeleteByUser},
		{"delete_expired_removes_only_expired", testVerificationDeleteExpired},
		{"deleting_the_user_deletes_their_links", testVerificationCascade},
		{"stored_value_is_a_copy", testVerificationCopies},
	}
	for _, tt := range tests {
		t.Run("contract=VerificationRepository/"+tt.name, func(t *testing.T) {
			tt.fn(t, newStores(t))
		})
	}
}

// makeVerification returns link id of userID for purpose, created at
// baseTime and valid for ttl, whose token is "token-<id>".
func makeVerification(id string, purpose domain.VerificationPurpose, userID domain.UserID, ttl time.Duration) *domain.Verification {
	return domain.NewVerification(id, purpose, domain.HashToken("token-"+id), userID,
		domain.Email(string(userID)+"@example.com"), ttl, baseTime)
}

func mustCreateVerification(t *testing.T, repo ports.VerificationRepository, v *domain.Verification) {
	t.Helper()
	if err := repo.Create(context.Background(), v); err != nil {
		t.Fatalf("Create link %s: %v", v.ID(), err)
	}
}

func mustConsume(t *testing.T, repo ports.VerificationRepository, purpose domain.VerificationPurpose, id string) *domain.Verification {
	t.Helper()
	v, err := repo.Consume(context.Background(), purpose, domain.HashToken("token-"+id))
	if err != nil {
		t.Fatalf("Consume(%s, %s): %v", purpose, id, err)
	}
	return v
}

func assertConsumed(t *testing.T, repo ports.VerificationRepository, purpose domain.VerificationPurpose, id string) {
	t.Helper()
	_, err := repo.Consume(context.Background(), purpose, domain.HashToken("token-"+id))
	mustBeKind(t, err, domain.ErrNotFound)
}

func assertSameVerification(t *testing.T, got, want *domain.Verification) {
	t.Helper()
	if got.ID() != want.ID() || got.Purpose() != want.Purpose() || got.TokenHash() != want.TokenHash() ||
		got.UserID() != want.UserID() || got.Email() != want.Email() {
		t.Fatalf("link mismatch:\n got  %s\n want %s", describeVerification(got), describeVerification(want))
	}
	assertTime(t, "ExpiresAt", got.ExpiresAt(), want.ExpiresAt())
	assertTime(t, "CreatedAt", got.CreatedAt(), want.CreatedAt())
}

func describeVerification(v *domain.Verification) string {
	return fmt.Sprintf("{id=%s purpose=%s hash=%s user=%s email=%s expires=%s created=%s}",
		v.ID(), v.Purpose(), v.TokenHash(), v.UserID(), v.Email(),
		v.ExpiresAt().Format(time.RFC3339Nano), v.CreatedAt().Format(time.RFC3339Nano))
}

func testVerificationRoundTrip(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	local := time.Date(2026, 7, 8, 9, 10, 11, 654321987, time.FixedZone("UTC-3", -3*60*60))
	// The address may differ from the user's: an e-mail change is sent to the new one.
	v := domain.NewVerification("v1", domain.PurposeChangeEmail, domain.HashToken("tok-1"), "u1",
		"new.address@example.org", 24*time.Hour, local)
	mustCreateVerification(t, s.Verifications, v)
	got, err := s.Verifications.Consume(context.Background(), domain.PurposeChangeEmail, domain.HashToken("tok-1"))
	if err != nil {
		t.Fatal(err)
	}
	assertSameVerification(t, got, v)
	assertTime(t, "CreatedAt", got.CreatedAt(), local.Truncate(time.Microsecond))
}

func testVerificationConsumeOnce(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	v := makeVerification("v1", domain.PurposeResetPassword, "u1", time.Hour)
	mustCreateVerification(t, s.Verifications, v)
	assertSameVerification(t, mustConsume(t, s.Verifications, domain.PurposeResetPassword, "v1"), v)
	assertConsumed(t, s.Verifications, domain.PurposeResetPassword, "v1")
}

func testVerificationWrongPurpose(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateVerification(t, s.Verifications, makeVerification("v1", domain.PurposeVerifyEmail, "u1", time.Hour))
	// A link mailed to verify an address must not reset the password.
	assertConsumed(t, s.Verifications, domain.PurposeResetPassword, "v1")
	mustConsume(t, s.Verifications, domain.PurposeVerifyEmail, "v1")
}

func testVerificationConsumeRace(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreateVerification(t, s.Verifications, makeVerification("v1", domain.PurposeDeleteUser, "u1", time.Hour))
	const workers = 10
	winners := make([]*domain.Verification, workers)
	errs := runParallel(workers, func(i int) error {
		v, err := s.Verifications.Consume(context.Background(), domain.PurposeDeleteUser, domain.HashToken("token-v1"))
		winners[i] = v
		return err
	})
	wins := 0
	for i, err := range errs {
		switch {
		case err == nil:
			wins++
			if winners[i] == nil || winners[i].ID() != "v1" {
				t.Fatalf("winning Consume returned %v", winners[i])
			}
		case errors.Is(err, domain.ErrNotFound):
		default:
			t.Fatalf("racing Consume: %v (kind %v), want success or not found", err, domain.KindOf(err))
		}
	}
	if wins != 1 {
		t.Fatalf("%d of %d concurrent Consume calls got the link, want exactly 1", wins, workers)
	}
}

func testVerificationConsumeExpired(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	v := makeVerification("v1", domain.PurposeVerifyEmail, "u1", -time.Minute)
	mustCreateVerification(t, s.Verifications, v)
	got := mustConsume(t, s.Verifications, domain.PurposeVerifyEmail, "v1")
	if !got.IsExpired(baseTime) {
		t.Fatal("the expired link came back unexpired")
	}
	assertConsumed(t, s.Verifications, domain.PurposeVerifyEmail, "v1")
}

func testVerificationNotFound(t *testing.T, s Stores) {
	assertConsumed(t, s.Verifications, domain.PurposeVerifyEmail, "nothing")
}

func testVerificationDuplicateID(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	first := makeVerification("v1", domain.PurposeVerifyEmail, "u1", time.Hour)
	mustCreateVerification(t, s.Verifications, first)
	dup := domain.NewVerification("v1", domain.PurposeVerifyEmail, domain.HashToken("other"), "u1", "u1@example.com", time.Hour, baseTime)
	mustBeKind(t, s.Verifications.Create(context.Background(), dup), domain.ErrConflict)
	_, err := s.Verifications.Consume(context.Background(), domain.PurposeVerifyEmail, domain.HashToken("other"))
	mustBeKind(t, err, domain.ErrNotFound)
	assertSameVerification(t, mustConsume(t, s.Verifications, domain.PurposeVerifyEmail, "v1"), first)
}

func testVerificationDuplicateToken(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1", "u2")
	first := makeVerification("v1", domain.PurposeVerifyEmail, "u1", time.Hour)
	mustCreateVerification(t, s.Verifications, first)
	dup := domain.NewVerification("v2", domain.PurposeResetPassword, first.TokenHash(), "u2", "u2@example.com", time.Hour, baseTime)
	mustBeKind(t, s.Verifications.Create(context.Background(), dup), domain.ErrConflict)
	assertSameVerification(t, mustConsume(t, s.Verifications, domain.PurposeVerifyEmail, "v1"), first)
}

func testVerificationUnknownUser(t *testing.T, s Stores) {
	v := makeVerification("v1", domain.PurposeVerifyEmail, "ghost", time.Hour)
	mustBeKind(t, s.Verifications.Create(context.Background(), v), domain.ErrNotFound)
	assertConsumed(t, s.Verifications, domain.PurposeVerifyEmail, "v1")
}

func testVerificationDeleteByUser(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1", "u2")
	mustCreateVerification(t, s.Verifications, makeVerification("a", domain.PurposeVerifyEmail, "u1", time.Hour))
	mustCreateVerification(t, s.Verifications, makeVerification("b", domain.PurposeVerifyEmail, "u1", time.Hour))
	mustCreateVerification(t, s.Verifications, makeVerification("c", domain.PurposeResetPassword, "u1", time.Hour))
	mustCreateVerification(t, s.Verifications, makeVerification("d", domain.PurposeVerifyEmail, "u2", time.Hour))

	n, err := s.Verifications.DeleteByUser(context.Background(), "u1", domain.PurposeVerifyEmail)
	if err != nil || n != 2 {
		t.Fatalf("DeleteByUser(u1, verify-email) = %d, %v; want 2, nil", n, err)
	}
	assertConsumed(t, s.Verifications, domain.PurposeVerifyEmail, "a")
	assertConsumed(t, s.Verifications, domain.PurposeVerifyEmail, "b")
	mustConsume(t, s.Verifications, domain.PurposeResetPassword, "c")
	mustConsume(t, s.Verifications, domain.PurposeVerifyEmail, "d")

	n, err = s.Verifications.DeleteByUser(context.Background(), "u1", domain.PurposeVerifyEmail)
	if err != nil || n != 0 {
		t.Fatalf("second DeleteByUser = %d, %v; want 0, nil", n, err)
	}
}

func testVerificationDeleteExpired(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	now := baseTime.Add(time.Hour)
	mustCreateVerification(t, s.Verifications, makeVerification("past", domain.PurposeVerifyEmail, "u1", 30*time.Minute))
	mustCreateVerification(t, s.Verifications, makeVerification("ends_now", domain.PurposeVerifyEmail, "u1", time.Hour))
	mustCreateVerification(t, s.Verifications, makeVerification("live", domain.PurposeVerifyEmail, "u1", time.Hour+time.Microsecond))

	n, err := s.Verifications.DeleteExpired(context.Background(), now.In(time.FixedZone("UTC+2", 2*60*60)))
	if err != nil || n != 2 {
		t.Fatalf("DeleteExpired = %d, %v; want 2, nil", n, err)
	}
	assertConsumed(t, s.Verifications, domain.PurposeVerifyEmail, "past")
	assertConsumed(t, s.Verifications, domain.PurposeVerifyEmail, "ends_now")
	mustConsume(t, s.Verifications, domain.PurposeVerifyEmail, "live")
}

func testVerificationCascade(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1", "u2")
	mustCreateVerification(t, s.Verifications, makeVerification("a", domain.PurposeVerifyEmail, "u1", time.Hour))
	mustCreateVerification(t, s.Verifications, makeVerification("b", domain.PurposeDeleteUser, "u1", time.Hour))
	mustCreateVerification(t, s.Verifications, makeVerification("c", domain.PurposeVerifyEmail, "u2", time.Hour))
	mustDeleteUser(t, s, "u1")
	assertConsumed(t, s.Verifications, domain.PurposeVerifyEmail, "a")
	assertConsumed(t, s.Verifications, domain.PurposeDeleteUser, "b")
	mustConsume(t, s.Verifications, domain.PurposeVerifyEmail, "c")
}

// Verification has no mutators, so only the stored value can be checked: a
// later change of the caller's variable must not reach the store.
func testVerificationCopies(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1", "u2")
	v := makeVerification("v1", domain.PurposeVerifyEmail, "u1", time.Hour)
	want := makeVerification("v1", domain.PurposeVerifyEmail, "u1", time.Hour)
	mustCreateVerification(t, s.Verifications, v)
	*v = *makeVerification("v2", domain.PurposeResetPassword, "u2", time.Minute)
	assertSameVerification(t, mustConsume(t, s.Verifications, domain.PurposeVerifyEmail, "v1"), want)
}
