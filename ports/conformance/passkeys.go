package conformance

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// RunPasskeyRepositories runs the PasskeyRepository and
// WebAuthnChallengeRepository contracts. newStores must return empty
// repositories sharing one fresh database each time it is called; Users,
// Passkeys and WebAuthnChallenges are used.
func RunPasskeyRepositories(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s Stores)
	}{
		{"passkey_round_trips_in_utc", testPasskeyRoundTrip},
		{"minimal_passkey_round_trips", testPasskeyMinimal},
		{"missing_passkey_is_not_found", testPasskeyNotFound},
		{"duplicate_credential_id_is_conflict", testPasskeyDuplicate},
		{"passkey_of_missing_user_is_not_found", testPasskeyMissingUser},
		{"list_is_newest_first_and_count_per_user", testPasskeyList},
		{"rename_only_own_passkey", testPasskeyRename},
		{"delete_only_own_passkey", testPasskeyDelete},
		{"sign_count_advances_and_sets_last_use", testPasskeySignCount},
		{"sign_count_regression_is_refused", testPasskeySignCountRegression},
		{"concurrent_sign_count_updates_one_wins", testPasskeySignCountParallel},
		{"returned_passkeys_are_copies", testPasskeyCopies},
		{"webauthn_challenge_consumed_once", testWebAuthnConsume},
		{"webauthn_challenge_expired_or_unknown_is_not_found", testWebAuthnNotFound},
		{"webauthn_challenge_duplicate_is_conflict_and_missing_user_not_found", testWebAuthnDuplicate},
		{"webauthn_concurrent_consumes_one_wins", testWebAuthnConsumeParallel},
		{"webauthn_delete_expired_removes_only_expired", testWebAuthnDeleteExpired},
		{"user_delete_cascades", testPasskeyUserDeleteCascades},
	}
	for _, tt := range tests {
		t.Run("contract=PasskeyRepositories/"+tt.name, func(t *testing.T) {
			tt.fn(t, newStores(t))
		})
	}
}

// makePasskey returns a full credential with id for user.
func makePasskey(id string, user domain.UserID, createdAt time.Time) domain.PasskeyCredential {
	c, err := domain.NewPasskeyCredential(domain.PasskeyCredential{
		ID: []byte(id), UserID: user, Name: "Key " + id, PublicKey: []byte("cose-" + id), SignCount: 0,
		AAGUID: bytes.Repeat([]byte{0xad}, 16), Transports: []string{"internal", "hybrid"},
		BackupEligible: true, BackedUp: true, AttestationType: "none", CreatedAt: createdAt,
	})
	if err != nil {
		panic(err)
	}
	return c
}

func mustCreatePasskey(t *testing.T, s Stores, c domain.PasskeyCredential) {
	t.Helper()
	if err := s.Passkeys.Create(context.Background(), c); err != nil {
		t.Fatalf("Create passkey %s: %v", c.ID, err)
	}
}

func mustGetPasskey(t *testing.T, s Stores, id string) domain.PasskeyCredential {
	t.Helper()
	c, err := s.Passkeys.Get(context.Background(), []byte(id))
	if err != nil {
		t.Fatalf("Get passkey %s: %v", id, err)
	}
	return c
}

func assertSamePasskey(t *testing.T, got, want domain.PasskeyCredential) {
	t.Helper()
	if !bytes.Equal(got.ID, want.ID) || got.UserID != want.UserID || got.Name != want.Name ||
		!bytes.Equal(got.PublicKey, want.PublicKey) || got.SignCount != want.SignCount || !bytes.Equal(got.AAGUID, want.AAGUID) ||
		!slices.Equal(got.Transports, want.Transports) || got.BackupEligible != want.BackupEligible ||
		got.BackedUp != want.BackedUp || got.AttestationType != want.AttestationType {
		t.Fatalf("passkey mismatch:\n got  %+v\n want %+v", got, want)
	}
	assertTime(t, "CreatedAt", got.CreatedAt, want.CreatedAt)
	assertTime(t, "LastUsedAt", got.LastUsedAt, want.LastUsedAt)
}

func testPasskeyRoundTrip(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	at := baseTime.In(nonUTC).Add(1234 * time.Nanosecond)
	c := makePasskey("cred-1", "u1", baseTime)
	c.CreatedAt, c.LastUsedAt, c.SignCount = at, at.Add(time.Hour), 4294967295
	c.ID = []byte{0x00, 0xff, 0x10, 0x80} // any bytes, not text
	mustCreatePasskey(t, s, c)
	got, err := s.Passkeys.Get(context.Background(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	c.CreatedAt, c.LastUsedAt = at.Truncate(time.Microsecond), at.Add(time.Hour).Truncate(time.Microsecond)
	assertSamePasskey(t, got, c)
}

func testPasskeyMinimal(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	c, err := domain.NewPasskeyCredential(domain.PasskeyCredential{ID: []byte("k"), UserID: "u1", PublicKey: []byte("cose"), CreatedAt: baseTime})
	if err != nil {
		t.Fatal(err)
	}
	mustCreatePasskey(t, s, c)
	got := mustGetPasskey(t, s, "k")
	assertSamePasskey(t, got, c)
	if got.AAGUID != nil || got.Transports != nil {
		t.Fatalf("AAGUID = %x, Transports = %q, want none", got.AAGUID, got.Transports)
	}
}

func testPasskeyNotFound(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	_, err := s.Passkeys.Get(ctx, []byte("nope"))
	mustBeCode(t, err, domain.ErrNotFound, domain.ErrPasskeyNotFound.Code)
	mustBeCode(t, s.Passkeys.Rename(ctx, "u1", []byte("nope"), "x"), domain.ErrNotFound, domain.ErrPasskeyNotFound.Code)
	mustBeCode(t, s.Passkeys.Delete(ctx, "u1", []byte("nope")), domain.ErrNotFound, domain.ErrPasskeyNotFound.Code)
	mustBeCode(t, s.Passkeys.UpdateSignCount(ctx, []byte("nope"), 1, 2, baseTime), domain.ErrNotFound, domain.ErrPasskeyNotFound.Code)
}

func testPasskeyDuplicate(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1", "u2")
	mustCreatePasskey(t, s, makePasskey("k1", "u1", baseTime))
	for _, user := range []domain.UserID{"u1", "u2"} {
		dup := makePasskey("k1", user, baseTime.Add(time.Hour))
		dup.Name = "Other"
		mustBeCode(t, s.Passkeys.Create(context.Background(), dup), domain.ErrConflict, domain.ErrPasskeyExists.Code)
	}
	if got := mustGetPasskey(t, s, "k1"); got.UserID != "u1" || got.Name != "Key k1" {
		t.Fatalf("passkey after refused duplicates = %+v", got)
	}
}

func testPasskeyMissingUser(t *testing.T, s Stores) {
	err := s.Passkeys.Create(context.Background(), makePasskey("k1", "u9", baseTime))
	mustBeCode(t, err, domain.ErrNotFound, domain.ErrUserNotFound.Code)
}

func passkeyIDs(list []domain.PasskeyCredential) []string {
	var ids []string
	for _, c := range list {
		ids = append(ids, string(c.ID))
	}
	return ids
}

func assertPasskeyCount(t *testing.T, s Stores, user domain.UserID, want int) {
	t.Helper()
	n, err := s.Passkeys.CountByUser(context.Background(), user)
	if err != nil || n != want {
		t.Fatalf("CountByUser(%s) = %d, %v, want %d", user, n, err, want)
	}
}

func testPasskeyList(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "u2")
	list, err := s.Passkeys.ListByUser(ctx, "u1")
	if err != nil || len(list) != 0 {
		t.Fatalf("ListByUser of a user without passkeys = %v, %v", list, err)
	}
	assertPasskeyCount(t, s, "u1", 0)
	mustCreatePasskey(t, s, makePasskey("k1", "u1", baseTime))
	mustCreatePasskey(t, s, makePasskey("k3", "u1", baseTime.Add(time.Minute)))
	mustCreatePasskey(t, s, makePasskey("k2", "u1", baseTime.Add(time.Minute)))
	mustCreatePasskey(t, s, makePasskey("k4", "u1", baseTime.Add(-time.Minute)))
	mustCreatePasskey(t, s, makePasskey("k5", "u2", baseTime.Add(time.Hour)))
	list, err = s.Passkeys.ListByUser(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := passkeyIDs(list), []string{"k3", "k2", "k1", "k4"}; !slices.Equal(got, want) {
		t.Fatalf("ListByUser = %v, want %v (newest first, then id descending)", got, want)
	}
	assertSamePasskey(t, list[0], makePasskey("k3", "u1", baseTime.Add(time.Minute)))
	assertPasskeyCount(t, s, "u1", 4)
	assertPasskeyCount(t, s, "u2", 1)
}

func testPasskeyRename(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "u2")
	mustCreatePasskey(t, s, makePasskey("k1", "u1", baseTime))
	// Another user's credential is not found, and keeps its name.
	mustBeCode(t, s.Passkeys.Rename(ctx, "u2", []byte("k1"), "Stolen"), domain.ErrNotFound, domain.ErrPasskeyNotFound.Code)
	if got := mustGetPasskey(t, s, "k1").Name; got != "Key k1" {
		t.Fatalf("Name = %q after another user's rename", got)
	}
	if err := s.Passkeys.Rename(ctx, "u1", []byte("k1"), "Laptop"); err != nil {
		t.Fatal(err)
	}
	want := makePasskey("k1", "u1", baseTime)
	want.Name = "Laptop"
	assertSamePasskey(t, mustGetPasskey(t, s, "k1"), want)
	// Renaming to the same name is no error.
	if err := s.Passkeys.Rename(ctx, "u1", []byte("k1"), "Laptop"); err != nil {
		t.Fatalf("Rename to the same name: %v", err)
	}
}

func testPasskeyDelete(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "u2")
	mustCreatePasskey(t, s, makePasskey("k1", "u1", baseTime))
	mustCreatePasskey(t, s, makePasskey("k2", "u1", baseTime))
	mustBeCode(t, s.Passkeys.Delete(ctx, "u2", []byte("k1")), domain.ErrNotFound, domain.ErrPasskeyNotFound.Code)
	mustGetPasskey(t, s, "k1")
	if err := s.Passkeys.Delete(ctx, "u1", []byte("k1")); err != nil {
		t.Fatal(err)
	}
	_, err := s.Passkeys.Get(ctx, []byte("k1"))
	mustBeKind(t, err, domain.ErrNotFound)
	mustBeKind(t, s.Passkeys.Delete(ctx, "u1", []byte("k1")), domain.ErrNotFound)
	assertPasskeyCount(t, s, "u1", 1)
}

func mustUpdateSignCount(t *testing.T, s Stores, id string, old, next uint32, at time.Time) {
	t.Helper()
	if err := s.Passkeys.UpdateSignCount(context.Background(), []byte(id), old, next, at); err != nil {
		t.Fatalf("UpdateSignCount(%s, %d, %d): %v", id, old, next, err)
	}
}

func testPasskeySignCount(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreatePasskey(t, s, makePasskey("k1", "u1", baseTime))
	mustCreatePasskey(t, s, makePasskey("synced", "u1", baseTime))
	at := baseTime.In(nonUTC).Add(time.Minute + time.Nanosecond)
	mustUpdateSignCount(t, s, "k1", 0, 5, at)
	got := mustGetPasskey(t, s, "k1")
	if got.SignCount != 5 {
		t.Fatalf("SignCount = %d, want 5", got.SignCount)
	}
	assertTime(t, "LastUsedAt", got.LastUsedAt, at.Truncate(time.Microsecond))
	mustUpdateSignCount(t, s, "k1", 5, 4294967295, baseTime.Add(time.Hour))
	// An authenticator without a counter (synced passkeys) reports zero
	// every time: allowed, and the last use still moves.
	mustUpdateSignCount(t, s, "synced", 0, 0, baseTime.Add(time.Minute))
	mustUpdateSignCount(t, s, "synced", 0, 0, baseTime.Add(2*time.Minute))
	got = mustGetPasskey(t, s, "synced")
	if got.SignCount != 0 {
		t.Fatalf("SignCount = %d, want 0", got.SignCount)
	}
	assertTime(t, "LastUsedAt", got.LastUsedAt, baseTime.Add(2*time.Minute))
}

func testPasskeySignCountRegression(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	mustCreatePasskey(t, s, makePasskey("k1", "u1", baseTime))
	mustUpdateSignCount(t, s, "k1", 0, 10, baseTime)
	code := domain.ErrPasskeyCounterRegressed.Code
	for _, tc := range []struct{ old, next uint32 }{
		{10, 10}, // did not advance
		{10, 3},  // went backwards
		{10, 0},  // a counter that stopped
		{7, 12},  // the stored counter is not what the caller read
		{0, 0},   // nor is this
	} {
		err := s.Passkeys.UpdateSignCount(ctx, []byte("k1"), tc.old, tc.next, baseTime.Add(time.Hour))
		mustBeCode(t, err, domain.ErrConflict, code)
	}
	got := mustGetPasskey(t, s, "k1")
	if got.SignCount != 10 {
		t.Fatalf("SignCount = %d after refused updates, want 10", got.SignCount)
	}
	assertTime(t, "LastUsedAt", got.LastUsedAt, baseTime)
}

func testPasskeySignCountParallel(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustCreatePasskey(t, s, makePasskey("k1", "u1", baseTime))
	mustUpdateSignCount(t, s, "k1", 0, 5, baseTime)
	const n = 12
	errs := runParallel(n, func(i int) error {
		return s.Passkeys.UpdateSignCount(context.Background(), []byte("k1"), 5, uint32(6+i), baseTime) // #nosec G115 -- i counts 12 goroutines
	})
	winner := mustOneWin(t, errs, domain.ErrPasskeyCounterRegressed)
	if got := mustGetPasskey(t, s, "k1").SignCount; got != uint32(6+winner) { // #nosec G115 -- winner < 12
		t.Fatalf("SignCount = %d, want the winner's %d", got, 6+winner)
	}
}

func testPasskeyCopies(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	c := makePasskey("k1", "u1", baseTime)
	mustCreatePasskey(t, s, c)
	c.PublicKey[0], c.Transports[0] = 'X', "mutated"
	got := mustGetPasskey(t, s, "k1")
	got.PublicKey[0], got.AAGUID[0], got.Transports[0] = 'Y', 0, "mutated"
	list, err := s.Passkeys.ListByUser(context.Background(), "u1")
	if err != nil {
		t.Fatal(err)
	}
	list[0].ID[0] = 'z'
	assertSamePasskey(t, mustGetPasskey(t, s, "k1"), makePasskey("k1", "u1", baseTime))
}

// makeWebAuthnChallenge returns a challenge with id (hashed), expiring two
// minutes after baseTime.
func makeWebAuthnChallenge(id string, user domain.UserID, purpose domain.WebAuthnPurpose) domain.WebAuthnChallenge {
	c, err := domain.NewWebAuthnChallenge(hashOf(id), []byte("challenge-"+id), user, purpose,
		[]byte(`{"challenge":"`+id+`"}`), baseTime.Add(-time.Minute), baseTime.Add(2*time.Minute))
	if err != nil {
		panic(err)
	}
	return c
}

func mustCreateWebAuthnChallenge(t *testing.T, s Stores, c domain.WebAuthnChallenge) {
	t.Helper()
	if err := s.WebAuthnChallenges.Create(context.Background(), c); err != nil {
		t.Fatalf("Create WebAuthn challenge: %v", err)
	}
}

func assertSameWebAuthnChallenge(t *testing.T, got, want domain.WebAuthnChallenge) {
	t.Helper()
	if !bytes.Equal(got.IDHash, want.IDHash) || !bytes.Equal(got.Challenge, want.Challenge) || got.UserID != want.UserID ||
		got.Purpose != want.Purpose || !bytes.Equal(got.SessionData, want.SessionData) {
		t.Fatalf("challenge mismatch:\n got  %+v\n want %+v", got, want)
	}
	assertTime(t, "ExpiresAt", got.ExpiresAt, want.ExpiresAt)
	assertTime(t, "UsedAt", got.UsedAt, want.UsedAt)
}

func testWebAuthnConsume(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	for _, c := range []domain.WebAuthnChallenge{
		makeWebAuthnChallenge("reg", "u1", domain.WebAuthnRegistration),
		makeWebAuthnChallenge("auth", "u1", domain.WebAuthnAuthentication),
		makeWebAuthnChallenge("discoverable", "", domain.WebAuthnAuthentication),
	} {
		c.ExpiresAt = c.ExpiresAt.In(nonUTC).Add(time.Nanosecond)
		mustCreateWebAuthnChallenge(t, s, c)
		at := baseTime.In(nonUTC).Add(5 * time.Nanosecond)
		got, err := s.WebAuthnChallenges.Consume(ctx, c.IDHash, at)
		if err != nil {
			t.Fatalf("Consume %s: %v", c.Challenge, err)
		}
		c.ExpiresAt, c.UsedAt = c.ExpiresAt.Truncate(time.Microsecond), baseTime
		assertSameWebAuthnChallenge(t, got, c)
		_, err = s.WebAuthnChallenges.Consume(ctx, c.IDHash, at)
		mustBeCode(t, err, domain.ErrNotFound, domain.ErrWebAuthnChallengeNotFound.Code)
	}
}

func testWebAuthnNotFound(t *testing.T, s Stores) {
	ctx := context.Background()
	c := makeWebAuthnChallenge("c1", "", domain.WebAuthnAuthentication)
	mustCreateWebAuthnChallenge(t, s, c)
	_, err := s.WebAuthnChallenges.Consume(ctx, c.IDHash, c.ExpiresAt)
	mustBeCode(t, err, domain.ErrNotFound, domain.ErrWebAuthnChallengeNotFound.Code)
	_, err = s.WebAuthnChallenges.Consume(ctx, hashOf("nope"), baseTime)
	mustBeCode(t, err, domain.ErrNotFound, domain.ErrWebAuthnChallengeNotFound.Code)
	// The expired attempt did not use it.
	if _, err := s.WebAuthnChallenges.Consume(ctx, c.IDHash, baseTime); err != nil {
		t.Fatalf("Consume before expiry: %v", err)
	}
}

func testWebAuthnDuplicate(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	c := makeWebAuthnChallenge("c1", "u1", domain.WebAuthnRegistration)
	mustCreateWebAuthnChallenge(t, s, c)
	dup := makeWebAuthnChallenge("c1", "", domain.WebAuthnAuthentication)
	mustBeCode(t, s.WebAuthnChallenges.Create(ctx, dup), domain.ErrConflict, domain.ErrWebAuthnChallengeExists.Code)
	got, err := s.WebAuthnChallenges.Consume(ctx, c.IDHash, baseTime)
	if err != nil || got.UserID != "u1" || got.Purpose != domain.WebAuthnRegistration {
		t.Fatalf("Consume after a refused duplicate = %+v, %v", got, err)
	}
	missing := makeWebAuthnChallenge("c2", "u9", domain.WebAuthnRegistration)
	mustBeCode(t, s.WebAuthnChallenges.Create(ctx, missing), domain.ErrNotFound, domain.ErrUserNotFound.Code)
}

func testWebAuthnConsumeParallel(t *testing.T, s Stores) {
	c := makeWebAuthnChallenge("c1", "", domain.WebAuthnAuthentication)
	mustCreateWebAuthnChallenge(t, s, c)
	errs := runParallel(12, func(int) error {
		_, err := s.WebAuthnChallenges.Consume(context.Background(), c.IDHash, baseTime)
		return err
	})
	mustOneWin(t, errs, domain.ErrWebAuthnChallengeNotFound)
}

func testWebAuthnDeleteExpired(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	old := makeWebAuthnChallenge("old", "u1", domain.WebAuthnRegistration)
	mustCreateWebAuthnChallenge(t, s, old)
	used := makeWebAuthnChallenge("used", "", domain.WebAuthnAuthentication)
	mustCreateWebAuthnChallenge(t, s, used)
	if _, err := s.WebAuthnChallenges.Consume(ctx, used.IDHash, baseTime); err != nil {
		t.Fatal(err)
	}
	live := makeWebAuthnChallenge("live", "", domain.WebAuthnAuthentication)
	live.ExpiresAt = old.ExpiresAt.Add(time.Minute)
	mustCreateWebAuthnChallenge(t, s, live)
	n, err := s.WebAuthnChallenges.DeleteExpired(ctx, old.ExpiresAt.Add(time.Microsecond))
	if err != nil || n != 2 {
		t.Fatalf("DeleteExpired = %d, %v, want 2", n, err)
	}
	if n, err := s.WebAuthnChallenges.DeleteExpired(ctx, live.ExpiresAt); err != nil || n != 0 {
		t.Fatalf("DeleteExpired at the live challenge's expiry = %d, %v, want 0", n, err)
	}
	if _, err := s.WebAuthnChallenges.Consume(ctx, live.IDHash, baseTime); err != nil {
		t.Fatalf("the live challenge: %v", err)
	}
}

func testPasskeyUserDeleteCascades(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "u2")
	mustCreatePasskey(t, s, makePasskey("k1", "u1", baseTime))
	mustCreatePasskey(t, s, makePasskey("k2", "u2", baseTime))
	mustCreateWebAuthnChallenge(t, s, makeWebAuthnChallenge("c1", "u1", domain.WebAuthnRegistration))
	mustCreateWebAuthnChallenge(t, s, makeWebAuthnChallenge("c2", "u2", domain.WebAuthnAuthentication))
	mustDeleteUser(t, s, "u1")
	_, err := s.Passkeys.Get(ctx, []byte("k1"))
	mustBeKind(t, err, domain.ErrNotFound)
	assertPasskeyCount(t, s, "u1", 0)
	_, err = s.WebAuthnChallenges.Consume(ctx, hashOf("c1"), baseTime)
	mustBeKind(t, err, domain.ErrNotFound)
	mustGetPasskey(t, s, "k2")
	if _, err := s.WebAuthnChallenges.Consume(ctx, hashOf("c2"), baseTime); err != nil {
		t.Fatalf("another user's challenge: %v", err)
	}
}
