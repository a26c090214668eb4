package conformance

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// RunMFARepositories runs the TwoFactorRepository and MFAChallengeRepository
// contracts. newStores must return empty repositories sharing one fresh
// database each time it is called; Users, TwoFactor, MFAChallenges,
// Passkeys and WebAuthnChallenges are used.
func RunMFARepositories(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s Stores)
	}{
		{"totp_round_trips_unverified_in_utc", testTOTPRoundTrip},
		{"missing_totp_is_not_found", testTOTPNotFound},
		{"totp_of_missing_user_is_not_found", testTOTPMissingUser},
		{"totp_save_replaces_unverified_only", testTOTPSaveReplaces},
		{"totp_verify_marks_verified_and_uses_step", testTOTPVerify},
		{"totp_step_replay_is_refused", testTOTPReplay},
		{"totp_concurrent_uses_of_one_step_one_wins", testTOTPStepParallel},
		{"totp_delete", testTOTPDelete},
		{"backup_codes_replace_all_and_count", testBackupCodesReplace},
		{"backup_code_is_single_use", testBackupCodeSingleUse},
		{"backup_code_concurrent_uses_one_wins", testBackupCodeParallel},
		{"backup_codes_of_missing_user_are_not_found", testBackupCodesMissingUser},
		{"delete_all_resets_only_that_users_factors", testMFADeleteAll},
		{"user_delete_cascades", testMFAUserDeleteCascades},
		{"challenge_round_trips_in_utc", testMFAChallengeRoundTrip},
		{"challenge_expired_consumed_or_unknown_is_not_found", testMFAChallengeNotFound},
		{"challenge_duplicate_is_conflict_and_missing_user_not_found", testMFAChallengeDuplicate},
		{"challenge_failures_count_and_exhaust", testMFAChallengeFailures},
		{"challenge_concurrent_failures_none_lost", testMFAChallengeFailuresParallel},
		{"challenge_concurrent_failures_stop_at_max", testMFAChallengeFailuresExhaustParallel},
		{"challenge_concurrent_consumes_one_wins", testMFAChallengeConsumeParallel},
		{"challenge_set_otp_replaces", testMFAChallengeSetOTP},
		{"challenge_delete_expired_removes_only_expired", testMFAChallengeDeleteExpired},
		{"returned_values_are_copies", testMFACopies},
		{"factor_lockout_round_trips_and_lifts", testFactorLockoutRoundTrip},
		{"factor_lockout_concurrent_failures_none_lost", testFactorLockoutParallel},
	}
	for _, tt := range tests {
		t.Run("contract=MFARepositories/"+tt.name, func(t *testing.T) {
			tt.fn(t, newStores(t))
		})
	}
}

// hashOf is the SHA-256 of s, as the use cases hash codes and ids.
func hashOf(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

func mustSaveTOTP(t *testing.T, s Stores, user domain.UserID, at time.Time) domain.TOTPFactor {
	t.Helper()
	f, err := domain.NewTOTPFactor(user, []byte("sealed-"+string(user)), at)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.TwoFactor.SaveTOTP(context.Background(), f); err != nil {
		t.Fatalf("SaveTOTP %s: %v", user, err)
	}
	return f
}

func mustGetTOTP(t *testing.T, s Stores, user domain.UserID) domain.TOTPFactor {
	t.Helper()
	f, err := s.TwoFactor.GetTOTP(context.Background(), user)
	if err != nil {
		t.Fatalf("GetTOTP %s: %v", user, err)
	}
	return f
}

func mustVerifyTOTP(t *testing.T, s Stores, user domain.UserID, step int64, at time.Time) {
	t.Helper()
	if err := s.TwoFactor.VerifyTOTP(context.Background(), user, step, at); err != nil {
		t.Fatalf("VerifyTOTP %s step %d: %v", user, step, err)
	}
}

func assertTOTP(t *testing.T, got domain.TOTPFactor, user domain.UserID, secret string, verified bool, step int64, created, verifiedAt time.Time) {
	t.Helper()
	if got.UserID != user || string(got.SealedSecret) != secret || got.Verified != verified || got.LastUsedStep != step {
		t.Fatalf("factor = %+v, want user %s secret %q verified=%v step %d", got, user, secret, verified, step)
	}
	assertTime(t, "CreatedAt", got.CreatedAt, created)
	assertTime(t, "VerifiedAt", got.VerifiedAt, verifiedAt)
}

func testTOTPRoundTrip(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	at := baseTime.In(nonUTC).Add(1234 * time.Nanosecond)
	f := domain.TOTPFactor{UserID: "u1", SealedSecret: []byte("sealed"), CreatedAt: at,
		// A caller cannot store a factor already verified or with a step used.
		Verified: true, LastUsedStep: 99, VerifiedAt: at}
	if err := s.TwoFactor.SaveTOTP(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	assertTOTP(t, mustGetTOTP(t, s, "u1"), "u1", "sealed", false, 0, at.Truncate(time.Microsecond), time.Time{})
}

func testTOTPNotFound(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	_, err := s.TwoFactor.GetTOTP(ctx, "u1")
	mustBeCode(t, err, domain.ErrNotFound, domain.ErrTOTPNotFound.Code)
	mustBeCode(t, s.TwoFactor.VerifyTOTP(ctx, "u1", 1, baseTime), domain.ErrNotFound, domain.ErrTOTPNotFound.Code)
	mustBeCode(t, s.TwoFactor.UseTOTPStep(ctx, "u1", 1), domain.ErrNotFound, domain.ErrTOTPNotFound.Code)
	mustBeCode(t, s.TwoFactor.DeleteTOTP(ctx, "u1"), domain.ErrNotFound, domain.ErrTOTPNotFound.Code)
}

func testTOTPMissingUser(t *testing.T, s Stores) {
	f, _ := domain.NewTOTPFactor("u9", []byte("sealed"), baseTime)
	mustBeCode(t, s.TwoFactor.SaveTOTP(context.Background(), f), domain.ErrNotFound, domain.ErrUserNotFound.Code)
}

func testTOTPSaveReplaces(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	mustSaveTOTP(t, s, "u1", baseTime)
	// An unverified factor is replaced: a new enrolment.
	f, _ := domain.NewTOTPFactor("u1", []byte("second"), baseTime.Add(time.Minute))
	if err := s.TwoFactor.SaveTOTP(ctx, f); err != nil {
		t.Fatalf("SaveTOTP over an unverified factor: %v", err)
	}
	assertTOTP(t, mustGetTOTP(t, s, "u1"), "u1", "second", false, 0, baseTime.Add(time.Minute), time.Time{})
	// A verified one is not.
	mustVerifyTOTP(t, s, "u1", 100, baseTime.Add(2*time.Minute))
	f, _ = domain.NewTOTPFactor("u1", []byte("third"), baseTime.Add(3*time.Minute))
	mustBeCode(t, s.TwoFactor.SaveTOTP(ctx, f), domain.ErrConflict, domain.ErrTOTPExists.Code)
	assertTOTP(t, mustGetTOTP(t, s, "u1"), "u1", "second", true, 100, baseTime.Add(time.Minute), baseTime.Add(2*time.Minute))
}

func testTOTPVerify(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	mustSaveTOTP(t, s, "u1", baseTime)
	at := baseTime.In(nonUTC).Add(time.Minute + 7*time.Nanosecond)
	mustVerifyTOTP(t, s, "u1", 100, at)
	assertTOTP(t, mustGetTOTP(t, s, "u1"), "u1", "sealed-u1", true, 100, baseTime, at.Truncate(time.Microsecond))
	// The same code again is a replay.
	mustBeCode(t, s.TwoFactor.VerifyTOTP(ctx, "u1", 100, baseTime.Add(time.Hour)), domain.ErrConflict, domain.ErrTOTPStepReplayed.Code)
	// A later step is accepted; the first verification time stays.
	mustVerifyTOTP(t, s, "u1", 101, baseTime.Add(time.Hour))
	assertTOTP(t, mustGetTOTP(t, s, "u1"), "u1", "sealed-u1", true, 101, baseTime, at.Truncate(time.Microsecond))
}

func testTOTPReplay(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	mustSaveTOTP(t, s, "u1", baseTime)
	// Until verified, the factor does not sign anyone in.
	mustBeCode(t, s.TwoFactor.UseTOTPStep(ctx, "u1", 5), domain.ErrNotFound, domain.ErrTOTPNotFound.Code)
	mustVerifyTOTP(t, s, "u1", 100, baseTime)
	for _, step := range []int64{100, 99, 0} {
		mustBeCode(t, s.TwoFactor.UseTOTPStep(ctx, "u1", step), domain.ErrConflict, domain.ErrTOTPStepReplayed.Code)
	}
	if err := s.TwoFactor.UseTOTPStep(ctx, "u1", 101); err != nil {
		t.Fatalf("UseTOTPStep(101): %v", err)
	}
	mustBeCode(t, s.TwoFactor.UseTOTPStep(ctx, "u1", 101), domain.ErrConflict, domain.ErrTOTPStepReplayed.Code)
	if err := s.TwoFactor.UseTOTPStep(ctx, "u1", 103); err != nil {
		t.Fatalf("UseTOTPStep(103): %v", err)
	}
	if got := mustGetTOTP(t, s, "u1").LastUsedStep; got != 103 {
		t.Fatalf("LastUsedStep = %d, want 103", got)
	}
}

func testTOTPStepParallel(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	mustSaveTOTP(t, s, "u1", baseTime)
	mustVerifyTOTP(t, s, "u1", 100, baseTime)
	errs := runParallel(12, func(int) error { return s.TwoFactor.UseTOTPStep(context.Background(), "u1", 200) })
	mustOneWin(t, errs, domain.ErrTOTPStepReplayed)
}

// mustOneWin fails unless exactly one of errs is nil and every other one
// matches loser.
func mustOneWin(t *testing.T, errs []error, loser *domain.Error) int {
	t.Helper()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("calls %d and %d both succeeded", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, loser):
			t.Fatalf("call %d: %v, want %s", i, err, loser.Code)
		}
	}
	if winner < 0 {
		t.Fatal("no call succeeded")
	}
	return winner
}

func testTOTPDelete(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "u2")
	mustSaveTOTP(t, s, "u1", baseTime)
	mustSaveTOTP(t, s, "u2", baseTime)
	mustVerifyTOTP(t, s, "u1", 100, baseTime)
	if err := s.TwoFactor.DeleteTOTP(ctx, "u1"); err != nil {
		t.Fatal(err)
	}
	_, err := s.TwoFactor.GetTOTP(ctx, "u1")
	mustBeKind(t, err, domain.ErrNotFound)
	mustGetTOTP(t, s, "u2")
	// After a delete, a new enrolment starts afresh.
	mustSaveTOTP(t, s, "u1", baseTime.Add(time.Hour))
	assertTOTP(t, mustGetTOTP(t, s, "u1"), "u1", "sealed-u1", false, 0, baseTime.Add(time.Hour), time.Time{})
}

// codeHashes returns the hashes of backup codes named prefix-0, prefix-1, ….
func codeHashes(prefix string, n int) [][]byte {
	out := make([][]byte, n)
	for i := range n {
		out[i] = hashOf(prefix + "-" + string(rune('a'+i)))
	}
	return out
}

func mustReplaceBackupCodes(t *testing.T, s Stores, user domain.UserID, hashes [][]byte) {
	t.Helper()
	if err := s.TwoFactor.ReplaceBackupCodes(context.Background(), user, hashes, baseTime); err != nil {
		t.Fatalf("ReplaceBackupCodes %s: %v", user, err)
	}
}

func assertUnusedCodes(t *testing.T, s Stores, user domain.UserID, want int) {
	t.Helper()
	n, err := s.TwoFactor.CountUnusedBackupCodes(context.Background(), user)
	if err != nil || n != want {
		t.Fatalf("CountUnusedBackupCodes(%s) = %d, %v, want %d", user, n, err, want)
	}
}

func testBackupCodesReplace(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "u2")
	assertUnusedCodes(t, s, "u1", 0)
	first := codeHashes("first", 10)
	mustReplaceBackupCodes(t, s, "u1", first)
	mustReplaceBackupCodes(t, s, "u2", codeHashes("other", 3))
	assertUnusedCodes(t, s, "u1", 10)
	if err := s.TwoFactor.UseBackupCode(ctx, "u1", first[0], baseTime); err != nil {
		t.Fatal(err)
	}
	assertUnusedCodes(t, s, "u1", 9)
	second := codeHashes("second", 10)
	mustReplaceBackupCodes(t, s, "u1", second)
	assertUnusedCodes(t, s, "u1", 10)
	// The old codes are gone, used or not; the new ones work.
	mustBeCode(t, s.TwoFactor.UseBackupCode(ctx, "u1", first[1], baseTime), domain.ErrNotFound, domain.ErrBackupCodeNotFound.Code)
	if err := s.TwoFactor.UseBackupCode(ctx, "u1", second[9], baseTime); err != nil {
		t.Fatal(err)
	}
	assertUnusedCodes(t, s, "u2", 3)
	mustReplaceBackupCodes(t, s, "u1", nil)
	assertUnusedCodes(t, s, "u1", 0)
}

func testBackupCodeSingleUse(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "u2")
	codes := codeHashes("c", 3)
	mustReplaceBackupCodes(t, s, "u1", codes)
	at := baseTime.In(nonUTC).Add(time.Nanosecond)
	if err := s.TwoFactor.UseBackupCode(ctx, "u1", codes[1], at); err != nil {
		t.Fatal(err)
	}
	// Used, unknown, and another user's: all answer the same.
	mustBeCode(t, s.TwoFactor.UseBackupCode(ctx, "u1", codes[1], at), domain.ErrNotFound, domain.ErrBackupCodeNotFound.Code)
	mustBeCode(t, s.TwoFactor.UseBackupCode(ctx, "u1", hashOf("nope"), at), domain.ErrNotFound, domain.ErrBackupCodeNotFound.Code)
	mustBeCode(t, s.TwoFactor.UseBackupCode(ctx, "u2", codes[0], at), domain.ErrNotFound, domain.ErrBackupCodeNotFound.Code)
	assertUnusedCodes(t, s, "u1", 2)
}

func testBackupCodeParallel(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	codes := codeHashes("c", 10)
	mustReplaceBackupCodes(t, s, "u1", codes)
	errs := runParallel(12, func(int) error {
		return s.TwoFactor.UseBackupCode(context.Background(), "u1", codes[4], baseTime)
	})
	mustOneWin(t, errs, domain.ErrBackupCodeNotFound)
	assertUnusedCodes(t, s, "u1", 9)
}

func testBackupCodesMissingUser(t *testing.T, s Stores) {
	ctx := context.Background()
	for _, hashes := range [][][]byte{codeHashes("c", 2), nil} {
		mustBeCode(t, s.TwoFactor.ReplaceBackupCodes(ctx, "u9", hashes, baseTime), domain.ErrNotFound, domain.ErrUserNotFound.Code)
	}
	assertUnusedCodes(t, s, "u9", 0)
}

// seedFactors gives user a verified TOTP factor, three backup codes, a
// second-factor challenge, a passkey and a WebAuthn challenge, each named
// after the user.
func seedFactors(t *testing.T, s Stores, user domain.UserID) {
	t.Helper()
	mustSaveTOTP(t, s, user, baseTime)
	mustVerifyTOTP(t, s, user, 100, baseTime)
	mustReplaceBackupCodes(t, s, user, codeHashes(string(user), 3))
	mustCreateMFAChallenge(t, s, "ch-"+string(user), user, 5)
	mustCreatePasskey(t, s, makePasskey("pk-"+string(user), user, baseTime))
	mustCreateWebAuthnChallenge(t, s, makeWebAuthnChallenge("wa-"+string(user), user, domain.WebAuthnRegistration))
}

// assertFactors checks whether user still has what seedFactors gave them.
func assertFactors(t *testing.T, s Stores, user domain.UserID, want bool) {
	t.Helper()
	ctx := context.Background()
	_, err := s.TwoFactor.GetTOTP(ctx, user)
	codes, cerr := s.TwoFactor.CountUnusedBackupCodes(ctx, user)
	_, chErr := s.MFAChallenges.Get(ctx, hashOf("ch-"+string(user)), baseTime)
	passkeys, pErr := s.Passkeys.CountByUser(ctx, user)
	_, pkErr := s.Passkeys.Get(ctx, []byte("pk-"+string(user)))
	if cerr != nil || pErr != nil {
		t.Fatalf("counts: %v, %v", cerr, pErr)
	}
	has := []bool{err == nil, codes == 3, chErr == nil, passkeys == 1, pkErr == nil}
	for i, h := range has {
		if h != want {
			t.Fatalf("user %s: factor %d present=%v, want %v (errors %v, %v, %v; codes %d, passkeys %d)",
				user, i, h, want, err, chErr, pkErr, codes, passkeys)
		}
	}
	if !want {
		for _, e := range []error{err, chErr, pkErr} {
			mustBeKind(t, e, domain.ErrNotFound)
		}
	}
	// The WebAuthn challenge is checked last: consuming it uses it.
	_, werr := s.WebAuthnChallenges.Consume(ctx, hashOf("wa-"+string(user)), baseTime)
	if (werr == nil) != want {
		t.Fatalf("user %s: WebAuthn challenge: %v, want present=%v", user, werr, want)
	}
}

func testMFADeleteAll(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1", "u2")
	seedFactors(t, s, "u1")
	seedFactors(t, s, "u2")
	if err := s.TwoFactor.DeleteAll(context.Background(), "u1"); err != nil {
		t.Fatal(err)
	}
	assertFactors(t, s, "u1", false)
	assertFactors(t, s, "u2", true)
	// Nothing left to delete is not an error.
	if err := s.TwoFactor.DeleteAll(context.Background(), "u1"); err != nil {
		t.Fatalf("second DeleteAll: %v", err)
	}
}

func testMFAUserDeleteCascades(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1", "u2")
	seedFactors(t, s, "u1")
	seedFactors(t, s, "u2")
	discoverable := makeWebAuthnChallenge("wa-any", "", domain.WebAuthnAuthentication)
	mustCreateWebAuthnChallenge(t, s, discoverable)
	mustDeleteUser(t, s, "u1")
	assertFactors(t, s, "u1", false)
	assertFactors(t, s, "u2", true)
	if _, err := s.WebAuthnChallenges.Consume(context.Background(), discoverable.IDHash, baseTime); err != nil {
		t.Fatalf("a discoverable challenge went with the user: %v", err)
	}
}

// makeMFAChallenge returns the challenge with id (hashed) of user, expiring
// five minutes after baseTime.
func makeMFAChallenge(t *testing.T, id string, user domain.UserID, maxAttempts int) domain.MFAChallenge {
	t.Helper()
	c, err := domain.NewMFAChallenge(hashOf(id), user, baseTime.Add(-time.Minute), baseTime.Add(5*time.Minute), maxAttempts, true)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustCreateMFAChallenge(t *testing.T, s Stores, id string, user domain.UserID, maxAttempts int) domain.MFAChallenge {
	t.Helper()
	c := makeMFAChallenge(t, id, user, maxAttempts)
	if err := s.MFAChallenges.Create(context.Background(), c); err != nil {
		t.Fatalf("Create challenge %s: %v", id, err)
	}
	return c
}

func mustGetMFAChallenge(t *testing.T, s Stores, id string) domain.MFAChallenge {
	t.Helper()
	c, err := s.MFAChallenges.Get(context.Background(), hashOf(id), baseTime)
	if err != nil {
		t.Fatalf("Get challenge %s: %v", id, err)
	}
	return c
}

func assertSameMFAChallenge(t *testing.T, got, want domain.MFAChallenge) {
	t.Helper()
	if !bytes.Equal(got.IDHash, want.IDHash) || got.UserID != want.UserID || got.Attempts != want.Attempts ||
		got.MaxAttempts != want.MaxAttempts || got.RememberMe != want.RememberMe || !bytes.Equal(got.OTPHash, want.OTPHash) {
		t.Fatalf("challenge mismatch:\n got  %+v\n want %+v", got, want)
	}
	assertTime(t, "ExpiresAt", got.ExpiresAt, want.ExpiresAt)
	assertTime(t, "ConsumedAt", got.ConsumedAt, want.ConsumedAt)
	assertTime(t, "OTPExpiresAt", got.OTPExpiresAt, want.OTPExpiresAt)
}

func testMFAChallengeRoundTrip(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	c := makeMFAChallenge(t, "ch1", "u1", 5)
	c.ExpiresAt = baseTime.In(nonUTC).Add(5*time.Minute + 3*time.Nanosecond)
	c.RememberMe = false
	if err := s.MFAChallenges.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	c.ExpiresAt = c.ExpiresAt.Truncate(time.Microsecond)
	got := mustGetMFAChallenge(t, s, "ch1")
	assertSameMFAChallenge(t, got, c)
	if got.OTPHash != nil {
		t.Fatalf("OTPHash = %x, want none", got.OTPHash)
	}
	consumed, err := s.MFAChallenges.Consume(ctx, hashOf("ch1"), baseTime.In(nonUTC))
	if err != nil {
		t.Fatal(err)
	}
	c.ConsumedAt = baseTime
	assertSameMFAChallenge(t, consumed, c)
}

func testMFAChallengeNotFound(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	c := mustCreateMFAChallenge(t, s, "ch1", "u1", 5)
	nf := domain.ErrMFAChallengeNotFound.Code
	// Expired: at ExpiresAt, it is over.
	_, err := s.MFAChallenges.Get(ctx, c.IDHash, c.ExpiresAt)
	mustBeCode(t, err, domain.ErrNotFound, nf)
	_, err = s.MFAChallenges.Consume(ctx, c.IDHash, c.ExpiresAt)
	mustBeCode(t, err, domain.ErrNotFound, nf)
	_, err = s.MFAChallenges.RecordFailure(ctx, c.IDHash, c.ExpiresAt.Add(time.Second))
	mustBeCode(t, err, domain.ErrNotFound, nf)
	mustBeCode(t, s.MFAChallenges.SetOTP(ctx, c.IDHash, hashOf("123456"), c.ExpiresAt, c.ExpiresAt), domain.ErrNotFound, nf)
	// Unknown.
	_, err = s.MFAChallenges.Get(ctx, hashOf("nope"), baseTime)
	mustBeCode(t, err, domain.ErrNotFound, nf)
	_, err = s.MFAChallenges.Consume(ctx, hashOf("nope"), baseTime)
	mustBeCode(t, err, domain.ErrNotFound, nf)
	// Consumed.
	if _, err := s.MFAChallenges.Consume(ctx, c.IDHash, baseTime); err != nil {
		t.Fatal(err)
	}
	_, err = s.MFAChallenges.Get(ctx, c.IDHash, baseTime)
	mustBeCode(t, err, domain.ErrNotFound, nf)
	_, err = s.MFAChallenges.Consume(ctx, c.IDHash, baseTime)
	mustBeCode(t, err, domain.ErrNotFound, nf)
	_, err = s.MFAChallenges.RecordFailure(ctx, c.IDHash, baseTime)
	mustBeCode(t, err, domain.ErrNotFound, nf)
	mustBeCode(t, s.MFAChallenges.SetOTP(ctx, c.IDHash, hashOf("123456"), c.ExpiresAt, baseTime), domain.ErrNotFound, nf)
}

func testMFAChallengeDuplicate(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1", "u2")
	mustCreateMFAChallenge(t, s, "ch1", "u1", 5)
	dup := makeMFAChallenge(t, "ch1", "u2", 3)
	mustBeCode(t, s.MFAChallenges.Create(ctx, dup), domain.ErrConflict, domain.ErrMFAChallengeExists.Code)
	if got := mustGetMFAChallenge(t, s, "ch1"); got.UserID != "u1" {
		t.Fatalf("UserID = %s after a refused duplicate, want u1", got.UserID)
	}
	mustBeCode(t, s.MFAChallenges.Create(ctx, makeMFAChallenge(t, "ch2", "u9", 5)), domain.ErrNotFound, domain.ErrUserNotFound.Code)
}

func testMFAChallengeFailures(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	c := mustCreateMFAChallenge(t, s, "ch1", "u1", 5)
	for want := 1; want <= 4; want++ {
		n, err := s.MFAChallenges.RecordFailure(ctx, c.IDHash, baseTime)
		if err != nil || n != want {
			t.Fatalf("RecordFailure = %d, %v, want %d", n, err, want)
		}
	}
	if got := mustGetMFAChallenge(t, s, "ch1"); got.Attempts != 4 || !got.ConsumedAt.IsZero() {
		t.Fatalf("after 4 failures: %+v", got)
	}
	// The fifth failure exhausts the challenge: no answer is taken after it.
	at := baseTime.In(nonUTC).Add(time.Nanosecond)
	n, err := s.MFAChallenges.RecordFailure(ctx, c.IDHash, at)
	if err != nil || n != 5 {
		t.Fatalf("fifth RecordFailure = %d, %v, want 5", n, err)
	}
	_, err = s.MFAChallenges.Get(ctx, c.IDHash, baseTime)
	mustBeKind(t, err, domain.ErrNotFound)
	_, err = s.MFAChallenges.Consume(ctx, c.IDHash, baseTime)
	mustBeKind(t, err, domain.ErrNotFound)
	_, err = s.MFAChallenges.RecordFailure(ctx, c.IDHash, baseTime)
	mustBeKind(t, err, domain.ErrNotFound)
}

func testMFAChallengeFailuresParallel(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	c := mustCreateMFAChallenge(t, s, "ch1", "u1", 100)
	const n = 20
	counts := make([]int, n)
	errs := runParallel(n, func(i int) error {
		var err error
		counts[i], err = s.MFAChallenges.RecordFailure(context.Background(), c.IDHash, baseTime)
		return err
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("RecordFailure %d: %v", i, err)
		}
	}
	slices.Sort(counts)
	for i, got := range counts {
		if got != i+1 {
			t.Fatalf("attempts returned = %v, want 1…%d once each", counts, n)
		}
	}
	if got := mustGetMFAChallenge(t, s, "ch1").Attempts; got != n {
		t.Fatalf("Attempts = %d, want %d (a failure was lost)", got, n)
	}
}

func testMFAChallengeFailuresExhaustParallel(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	c := mustCreateMFAChallenge(t, s, "ch1", "u1", 5)
	const n = 12
	counts := make([]int, n)
	errs := runParallel(n, func(i int) error {
		var err error
		counts[i], err = s.MFAChallenges.RecordFailure(context.Background(), c.IDHash, baseTime)
		return err
	})
	var got []int
	for i, err := range errs {
		switch {
		case err == nil:
			got = append(got, counts[i])
		case !errors.Is(err, domain.ErrMFAChallengeNotFound):
			t.Fatalf("RecordFailure %d: %v", i, err)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, []int{1, 2, 3, 4, 5}) {
		t.Fatalf("counted failures = %v, want 1…5: no more than MaxAttempts", got)
	}
	_, err := s.MFAChallenges.Consume(context.Background(), c.IDHash, baseTime)
	mustBeKind(t, err, domain.ErrNotFound)
}

func testMFAChallengeConsumeParallel(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	c := mustCreateMFAChallenge(t, s, "ch1", "u1", 5)
	errs := runParallel(12, func(int) error {
		_, err := s.MFAChallenges.Consume(context.Background(), c.IDHash, baseTime)
		return err
	})
	mustOneWin(t, errs, domain.ErrMFAChallengeNotFound)
}

func testMFAChallengeSetOTP(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	c := mustCreateMFAChallenge(t, s, "ch1", "u1", 5)
	exp := baseTime.In(nonUTC).Add(3*time.Minute + time.Nanosecond)
	if err := s.MFAChallenges.SetOTP(ctx, c.IDHash, hashOf("111111"), exp, baseTime); err != nil {
		t.Fatal(err)
	}
	c.OTPHash, c.OTPExpiresAt = hashOf("111111"), exp.Truncate(time.Microsecond)
	assertSameMFAChallenge(t, mustGetMFAChallenge(t, s, "ch1"), c)
	if err := s.MFAChallenges.SetOTP(ctx, c.IDHash, hashOf("222222"), baseTime.Add(4*time.Minute), baseTime); err != nil {
		t.Fatal(err)
	}
	c.OTPHash, c.OTPExpiresAt = hashOf("222222"), baseTime.Add(4*time.Minute)
	assertSameMFAChallenge(t, mustGetMFAChallenge(t, s, "ch1"), c)
}

func testMFAChallengeDeleteExpired(t *testing.T, s Stores) {
	ctx := context.Background()
	mustCreateUsers(t, s, "u1")
	old := mustCreateMFAChallenge(t, s, "old", "u1", 5)
	mustCreateMFAChallenge(t, s, "edge", "u1", 5)
	live := makeMFAChallenge(t, "live", "u1", 5)
	live.ExpiresAt = old.ExpiresAt.Add(time.Minute)
	if err := s.MFAChallenges.Create(ctx, live); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MFAChallenges.Consume(ctx, old.IDHash, baseTime); err != nil {
		t.Fatal(err)
	}
	// old (consumed) and edge expired before the bound, live after it; a
	// challenge expiring exactly at the bound stays.
	n, err := s.MFAChallenges.DeleteExpired(ctx, old.ExpiresAt.Add(time.Microsecond))
	if err != nil || n != 2 {
		t.Fatalf("DeleteExpired = %d, %v, want 2", n, err)
	}
	n, err = s.MFAChallenges.DeleteExpired(ctx, live.ExpiresAt)
	if err != nil || n != 0 {
		t.Fatalf("DeleteExpired at the live challenge's expiry = %d, %v, want 0", n, err)
	}
	mustGetMFAChallenge(t, s, "live")
}

func testMFACopies(t *testing.T, s Stores) {
	mustCreateUsers(t, s, "u1")
	c := mustCreateMFAChallenge(t, s, "ch1", "u1", 5)
	got := mustGetMFAChallenge(t, s, "ch1")
	got.IDHash[0] ^= 0xff
	mustGetMFAChallenge(t, s, "ch1")
	c.IDHash[1] ^= 0xff // the caller's value, after Create
	mustGetMFAChallenge(t, s, "ch1")
	mustSaveTOTP(t, s, "u1", baseTime)
	f := mustGetTOTP(t, s, "u1")
	f.SealedSecret[0] = 'X'
	if got := mustGetTOTP(t, s, "u1"); string(got.SealedSecret) != "sealed-u1" {
		t.Fatalf("SealedSecret = %q after mutating a returned copy", got.SealedSecret)
	}
}
