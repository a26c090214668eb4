package mfa

import (
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// The budget of wrong second-factor answers in a signed-in session
// (docs/multi-factor.md, "Attempts"): step-up and enrolment codes, TOTP,
// backup and e-mailed, count towards the same per-user lockout as the
// sign-in challenge, kept in the database; a locked user's right code is
// refused before it is looked at.

// wrongTOTP returns a code that is none of secret's codes near now on clock.
func wrongTOTP(clock *harness.Clock, secret []byte) string {
	near := []string{harness.TOTPAt(clock, secret, -2), harness.TOTPAt(clock, secret, -1), harness.TOTPAt(clock, secret, 0), harness.TOTPAt(clock, secret, 1), harness.TOTPAt(clock, secret, 2)}
	for _, c := range []string{"000000", "111111", "222222"} {
		if !slices.Contains(near, c) {
			return c
		}
	}
	return "333333"
}

func verifyCode(t *testing.T, c *harness.Client, kind, code string) *harness.Response {
	t.Helper()
	return c.Post("/api/auth/two-factor/verify-"+kind, harness.MustJSON(t, map[string]any{"code": code}))
}

// mustLocked fails unless the right code is refused as the locked
// challenge's answer is.
func mustLocked(t *testing.T, r *harness.Response) {
	t.Helper()
	harness.MustCode(t, r, http.StatusTooManyRequests, "ACCOUNT_TEMPORARILY_LOCKED")
}

// Ensure a session signed in with a password alone (a trusted browser:
// authMethods ["pwd"]) gets the lockout's ten wrong codes, whatever their
// kind, and then not even the right one; a right code in between forgets
// the wrong ones, as on the challenge.
func TestStepUpBudget_password_session(t *testing.T) {
	t.Parallel()
	app := harness.Shared(t, harness.StoreSQLite, harness.FwQuick)
	wrong := func(t *testing.T, s *harness.Client, u *harness.TfUser, n int) {
		t.Helper()
		for range n {
			harness.MustCode(t, verifyCode(t, s, "totp", wrongTOTP(s.App.Clock, u.Secret)), http.StatusUnauthorized, "INVALID_CODE")
		}
	}

	t.Run("totp", func(t *testing.T) {
		t.Parallel()
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "totp@example.com"))
		s := harness.MustStaleSession(t, app, u)
		wrong(t, s, u, 9)
		harness.MustOK(t, verifyCode(t, s, "backup-code", u.Backups[0])) // forgets the nine
		wrong(t, s, u, 10)
		mustLocked(t, verifyCode(t, s, "totp", harness.TOTPAt(app.Clock, u.Secret, 1)))
		// The same budget as sign-in's: the password is locked too.
		r := app.NewClient(t).Post("/api/auth/sign-in/email", harness.MustCredentials(t, u.Email, harness.TfPassword))
		harness.MustCode(t, r, http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
	})

	// Answers sent at once each take their turn on the user's count: no
	// more than ten are looked at.
	t.Run("at-once", func(t *testing.T) {
		t.Parallel()
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "at-once@example.com"))
		s := harness.MustStaleSession(t, app, u)
		var (
			mu     sync.Mutex
			wg     sync.WaitGroup
			counts = map[int]int{}
		)
		for range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := verifyCode(t, s.Clone(), "totp", wrongTOTP(s.App.Clock, u.Secret))
				mu.Lock()
				defer mu.Unlock()
				counts[r.Status]++
			}()
		}
		wg.Wait()
		if counts[http.StatusUnauthorized] != 10 || counts[http.StatusTooManyRequests] != 30 {
			t.Fatalf("40 wrong codes at once answered %v, want ten 401 and thirty 429", counts)
		}
		mustLocked(t, verifyCode(t, s, "totp", harness.TOTPAt(app.Clock, u.Secret, 1)))
	})

	t.Run("backup-code", func(t *testing.T) {
		t.Parallel()
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "backup@example.com"))
		s := harness.MustStaleSession(t, app, u)
		for range 10 {
			harness.MustCode(t, verifyCode(t, s, "backup-code", flipFirst(u.Backups[1])), http.StatusUnauthorized, "INVALID_BACKUP_CODE")
		}
		mustLocked(t, verifyCode(t, s, "backup-code", u.Backups[1]))
	})

	t.Run("otp", func(t *testing.T) {
		t.Parallel()
		u := harness.MustTwoFactorUser(t, app, harness.Email(t, "otp@example.com"))
		s := harness.MustStaleSession(t, app, u)
		code := mustSendSessionOTP(t, app, s, 1)
		for range 4 { // a code takes five
			harness.MustCode(t, verifyCode(t, s, "otp", wrongCode(code)), http.StatusUnauthorized, "INVALID_CODE")
		}
		wrong(t, s, u, 6)
		mustLocked(t, verifyCode(t, s, "otp", code))
	})
}

// Ensure a user without a password (none to count on) has the budget too:
// here an e-mailed code turning two-factor on, with a lockout of three.
func TestStepUpBudget_without_password(t *testing.T) {
	t.Parallel()
	harness.ForStores(t, harness.SQLOnly(harness.StoresThatMatter), harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_LOCKOUT_THRESHOLD": "3"}),
		func(t *testing.T, app *harness.App) {
			c := app.NewClient(t)
			id := harness.MustUser(t, harness.MustSignUp(t, c, "Ada", harness.Email(t, "ada@example.com"), harness.TfPassword))["id"].(string)
			// As for a user created without one, or signed up through a provider.
			if err := harness.MustDB(t, app).Exec("DELETE FROM credentials WHERE user_id = ?", id).Error; err != nil {
				t.Fatal(err)
			}
			code := mustSendSessionOTP(t, app, c, 1)
			for range 3 {
				harness.MustCode(t, verifyCode(t, c, "otp", wrongCode(code)), http.StatusUnauthorized, "INVALID_CODE")
			}
			mustLocked(t, verifyCode(t, c, "otp", code))
			if on := harness.MustUser(t, harness.MustSession(t, c))["twoFactorEnabled"]; on != false {
				t.Fatalf("twoFactorEnabled = %v, want false: the code was refused", on)
			}
		})
}

// Ensure two replicas on one database spend one budget: wrong codes sent
// to either add up, and the right one is refused on both.
func TestStepUpBudget_shared_by_replicas(t *testing.T) {
	t.Parallel()
	a := harness.MustStart(t, harness.StorePostgres, harness.FwQuick) // skips without PostgreSQL
	b := harness.MustStart(t, harness.StorePostgres, harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_DATABASE_URL": a.DatabaseURL}))
	u := harness.MustTwoFactorUser(t, a, harness.Email(t, "ada@example.com"))
	onA := harness.MustStaleSession(t, a, u)
	onB := b.NewClient(t)
	onB.Cookies = onA.Cookies
	for i := range 10 {
		s := onA
		if i%2 == 1 {
			s = onB
		}
		harness.MustCode(t, verifyCode(t, s, "totp", wrongTOTP(s.App.Clock, u.Secret)), http.StatusUnauthorized, "INVALID_CODE")
	}
	mustLocked(t, verifyCode(t, onB, "totp", harness.TOTPAt(a.Clock, u.Secret, 1)))
	mustLocked(t, verifyCode(t, onA, "totp", harness.TOTPAt(a.Clock, u.Secret, 1)))
}
