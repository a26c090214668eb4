package test

import (
	"net/http"
	"slices"
	"sync"
	"testing"
)

// The budget of wrong second-factor answers in a signed-in session
// (docs/multi-factor.md, "Attempts"): step-up and enrolment codes, TOTP,
// backup and e-mailed, count towards the same per-user lockout as the
// sign-in challenge, kept in the database; a locked user's right code is
// refused before it is looked at.

// wrongTOTP returns a code that is none of secret's codes near now.
func wrongTOTP(secret []byte) string {
	near := []string{totpAt(secret, -2), totpAt(secret, -1), totpAt(secret, 0), totpAt(secret, 1), totpAt(secret, 2)}
	for _, c := range []string{"000000", "111111", "222222"} {
		if !slices.Contains(near, c) {
			return c
		}
	}
	return "333333"
}

func verifyCode(t *testing.T, c *fwClient, kind, code string) *response {
	t.Helper()
	return c.post("/api/auth/two-factor/verify-"+kind, mustJSON(t, map[string]any{"code": code}))
}

// mustLocked fails unless the right code is refused as the locked
// challenge's answer is.
func mustLocked(t *testing.T, r *response) {
	t.Helper()
	mustCode(t, r, http.StatusTooManyRequests, "ACCOUNT_TEMPORARILY_LOCKED")
}

// Ensure a session signed in with a password alone (a trusted browser:
// authMethods ["pwd"]) gets the lockout's ten wrong codes, whatever their
// kind, and then not even the right one; a right code in between forgets
// the wrong ones, as on the challenge.
func TestStepUpBudget_password_session(t *testing.T) {
	t.Parallel()
	app := mustStartFramework(t, storeSQLite, fwQuick)
	wrong := func(t *testing.T, s *fwClient, u *tfUser, n int) {
		t.Helper()
		for range n {
			mustCode(t, verifyCode(t, s, "totp", wrongTOTP(u.secret)), http.StatusUnauthorized, "INVALID_CODE")
		}
	}

	t.Run("totp", func(t *testing.T) {
		t.Parallel()
		u := mustTwoFactorUser(t, app, "totp@example.com")
		s := mustStaleSession(t, app, u)
		wrong(t, s, u, 9)
		mustOK(t, verifyCode(t, s, "backup-code", u.backups[0])) // forgets the nine
		wrong(t, s, u, 10)
		mustLocked(t, verifyCode(t, s, "totp", totpAt(u.secret, 1)))
		// The same budget as sign-in's: the password is locked too.
		r := app.client(t).post("/api/auth/sign-in/email", mustCredentials(t, u.email, tfPassword))
		mustCode(t, r, http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
	})

	// Answers sent at once each take their turn on the user's count: no
	// more than ten are looked at.
	t.Run("at-once", func(t *testing.T) {
		t.Parallel()
		u := mustTwoFactorUser(t, app, "at-once@example.com")
		s := mustStaleSession(t, app, u)
		var (
			mu     sync.Mutex
			wg     sync.WaitGroup
			counts = map[int]int{}
		)
		for range 40 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := verifyCode(t, s.clone(), "totp", wrongTOTP(u.secret))
				mu.Lock()
				defer mu.Unlock()
				counts[r.Status]++
			}()
		}
		wg.Wait()
		if counts[http.StatusUnauthorized] != 10 || counts[http.StatusTooManyRequests] != 30 {
			t.Fatalf("40 wrong codes at once answered %v, want ten 401 and thirty 429", counts)
		}
		mustLocked(t, verifyCode(t, s, "totp", totpAt(u.secret, 1)))
	})

	t.Run("backup-code", func(t *testing.T) {
		t.Parallel()
		u := mustTwoFactorUser(t, app, "backup@example.com")
		s := mustStaleSession(t, app, u)
		for range 10 {
			mustCode(t, verifyCode(t, s, "backup-code", flipFirst(u.backups[1])), http.StatusUnauthorized, "INVALID_BACKUP_CODE")
		}
		mustLocked(t, verifyCode(t, s, "backup-code", u.backups[1]))
	})

	t.Run("otp", func(t *testing.T) {
		t.Parallel()
		u := mustTwoFactorUser(t, app, "otp@example.com")
		s := mustStaleSession(t, app, u)
		code := mustSendSessionOTP(t, app, s, 1)
		for range 4 { // a code takes five
			mustCode(t, verifyCode(t, s, "otp", wrongCode(code)), http.StatusUnauthorized, "INVALID_CODE")
		}
		wrong(t, s, u, 6)
		mustLocked(t, verifyCode(t, s, "otp", code))
	})
}

// Ensure a user without a password (none to count on) has the budget too:
// here an e-mailed code turning two-factor on, with a lockout of three.
func TestStepUpBudget_without_password(t *testing.T) {
	t.Parallel()
	fwForStores(t, storesThatMatter, fwEnv(fwQuick, map[string]string{"GATEHOUSE_LOCKOUT_THRESHOLD": "3"}),
		func(t *testing.T, app *fwApp) {
			c := app.client(t)
			id := mustUser(t, mustSignUp(t, c, "Ada", "ada@example.com", tfPassword))["id"].(string)
			// As for a user created without one, or signed up through a provider.
			if err := mustDB(t, app).Exec("DELETE FROM credentials WHERE user_id = ?", id).Error; err != nil {
				t.Fatal(err)
			}
			code := mustSendSessionOTP(t, app, c, 1)
			for range 3 {
				mustCode(t, verifyCode(t, c, "otp", wrongCode(code)), http.StatusUnauthorized, "INVALID_CODE")
			}
			mustLocked(t, verifyCode(t, c, "otp", code))
			if on := mustUser(t, mustSession(t, c))["twoFactorEnabled"]; on != false {
				t.Fatalf("twoFactorEnabled = %v, want false: the code was refused", on)
			}
		})
}

// Ensure two replicas on one database spend one budget: wrong codes sent
// to either add up, and the right one is refused on both.
func TestStepUpBudget_shared_by_replicas(t *testing.T) {
	t.Parallel()
	a := mustStartFramework(t, storePostgres, fwQuick) // skips without PostgreSQL
	b := mustStartFramework(t, storePostgres, fwEnv(fwQuick, map[string]string{"GATEHOUSE_DATABASE_URL": a.DatabaseURL}))
	u := mustTwoFactorUser(t, a, "ada@example.com")
	onA := mustStaleSession(t, a, u)
	onB := b.client(t)
	onB.Cookies = onA.Cookies
	for i := range 10 {
		s := onA
		if i%2 == 1 {
			s = onB
		}
		mustCode(t, verifyCode(t, s, "totp", wrongTOTP(u.secret)), http.StatusUnauthorized, "INVALID_CODE")
	}
	mustLocked(t, verifyCode(t, onB, "totp", totpAt(u.secret, 1)))
	mustLocked(t, verifyCode(t, onA, "totp", totpAt(u.secret, 1)))
}
