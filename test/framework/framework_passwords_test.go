package framework

import (
	"bufio"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
	"golang.org/x/text/unicode/norm"
)

// mustBlocklisted returns the first entry of the embedded common-password list
// that is long enough to pass the length rule.
func mustBlocklisted(t testing.TB) string {
	t.Helper()
	f, err := commonPasswordsFile()
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(f))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); len(line) >= 8 {
			return line
		}
	}
	t.Fatal("no blocklisted password of 8 or more characters")
	return ""
}

// Ensure the password policy: 8 to 128 characters counted as characters,
// common passwords and the user's own address refused, long passphrases
// with spaces and non-ASCII accepted and verified in full. A refused
// sign-up creates nothing.
func TestFramework_password_policy(t *testing.T) {
	t.Parallel()
	app := harness.Shared(t, harness.StoreMemory, harness.FwQuick)
	long := strings.Repeat("abcdefgh", 16) // 128
	passphrase := "corrëct hörse bättery stäple ☃ 🐎"
	tests := []struct {
		name, email, password string
		code                  string // "" means accepted
		wrong                 string // for accepted ones: a near miss that must fail
	}{
		{"seven_chars", harness.Email(t, "short@example.com"), "abcdefg", "PASSWORD_TOO_SHORT", ""},
		{"seven_runes_many_bytes", harness.Email(t, "runes@example.com"), "ééééééé", "PASSWORD_TOO_SHORT", ""},
		{"129_chars", harness.Email(t, "long@example.com"), long + "x", "PASSWORD_TOO_LONG", ""},
		{"blocklisted", harness.Email(t, "common@example.com"), mustBlocklisted(t), "PASSWORD_TOO_COMMON", ""},
		{"blocklisted_upper_case", harness.Email(t, "upper@example.com"), strings.ToUpper(mustBlocklisted(t)), "PASSWORD_TOO_COMMON", ""},
		{"own_address", harness.Email(t, "ada.lovelace@example.com"), harness.Email(t, "ada.lovelace@example.com"), "PASSWORD_TOO_COMMON", ""},
		{"own_address_other_case", harness.Email(t, "grace@example.com"), strings.Replace(strings.Replace(harness.Email(t, "grace@example.com"), "g", "G", 1), "@e", "@E", 1), "PASSWORD_TOO_COMMON", ""},
		{"128_chars", harness.Email(t, "max@example.com"), long, "", long[:127] + "X"},
		{"passphrase", harness.Email(t, "phrase@example.com"), passphrase, "", strings.TrimSuffix(passphrase, "🐎") + "🐄"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := app.NewClient(t).Post("/api/auth/sign-up/email", harness.MustJSON(t, map[string]string{"name": "Someone", "email": tt.email, "password": tt.password}))
			if tt.code != "" {
				if msg := harness.MustCode(t, r, http.StatusBadRequest, tt.code); strings.Contains(tt.password, "@") && strings.Contains(strings.ToLower(msg), strings.ToLower(tt.password)) {
					t.Fatalf("message repeats the password: %q", msg)
				}
				harness.MustSignInFails(t, app, tt.email, tt.password)
				return
			}
			harness.MustStatus(t, r, http.StatusOK)
			harness.MustSignIn(t, app.NewClient(t), tt.email, tt.password)
			harness.MustSignInFails(t, app, tt.email, tt.wrong)
		})
	}
	t.Run("change_password_applies_the_policy", func(t *testing.T) {
		c := app.NewClient(t)
		harness.MustSignUp(t, c, "Eve", harness.Email(t, "eve@example.com"), "correct horse battery")
		for pw, code := range map[string]string{"abcdefg": "PASSWORD_TOO_SHORT", long + "x": "PASSWORD_TOO_LONG", mustBlocklisted(t): "PASSWORD_TOO_COMMON", harness.Email(t, "eve@example.com"): "PASSWORD_TOO_COMMON"} {
			r := c.Post("/api/auth/change-password", harness.MustJSON(t, map[string]string{"currentPassword": "correct horse battery", "newPassword": pw}))
			harness.MustCode(t, r, http.StatusBadRequest, code)
		}
		harness.MustSignIn(t, app.NewClient(t), harness.Email(t, "eve@example.com"), "correct horse battery")
	})
}

// Ensure a password is compared after Unicode normalisation (NFKC, as
// Better Auth's own hasher does and NIST SP 800-63B asks), so the same
// passphrase typed on a keyboard that composes accents differently works.
func TestFramework_password_is_normalised(t *testing.T) {
	t.Parallel()
	app := harness.Shared(t, harness.StoreMemory, harness.FwQuick)
	composed := norm.NFC.String("crème brûlée à la carte")
	decomposed := norm.NFD.String(composed)
	if composed == decomposed {
		t.Fatal("test passphrase has no decomposable characters")
	}
	harness.MustSignUp(t, app.NewClient(t), "Ada", harness.Email(t, "ada@example.com"), composed)
	harness.MustSignIn(t, app.NewClient(t), harness.Email(t, "ada@example.com"), decomposed)
}

// Ensure ten wrong passwords (the default threshold) lock the account's
// password, so even the right one is refused with the same answer, until the
// cooldown ends; and that a success resets the count.
// It keeps a fresh application: it has a cooldown of its own, and moves the clock a minute.
func TestFramework_lockout(t *testing.T) {
	t.Parallel()
	app := harness.MustStart(t, harness.StoreMemory, harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_LOCKOUT_COOLDOWN": "1m"}))
	mustLockout(t, app, 10)
}

// Ensure the lockout holds on every store, where the count is stored: the
// same checks with a threshold of 3, which costs fewer hashes.
func TestFramework_lockout_is_stored(t *testing.T) {
	t.Parallel()
	env := harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_LOCKOUT_COOLDOWN": "1m", "GATEHOUSE_LOCKOUT_THRESHOLD": "3"})
	harness.ForStores(t, harness.SQLOnly(harness.StoresThatMatter), env, func(t *testing.T, app *harness.App) { mustLockout(t, app, 3) })
}

// mustLockout checks that threshold wrong passwords lock the password until
// the cooldown (a minute, on the app's clock) ends, and that a success
// resets the count.
func mustLockout(t *testing.T, app *harness.App, threshold int) {
	t.Helper()
	const pw = "correct horse battery"
	t.Run("locks_after_threshold", func(t *testing.T) {
		harness.MustSignUp(t, app.NewClient(t), "Ada", "ada@example.com", pw)
		wrong := app.NewClient(t).Post("/api/auth/sign-in/email", harness.MustCredentials(t, "ada@example.com", "wrong password 0"))
		harness.MustCode(t, wrong, http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
		for i := 1; i < threshold; i++ {
			harness.MustSignInFails(t, app, "ada@example.com", "wrong password "+string(rune('0'+i)))
		}
		locked := app.NewClient(t).Post("/api/auth/sign-in/email", harness.MustCredentials(t, "ada@example.com", pw))
		harness.MustCode(t, locked, http.StatusUnauthorized, "INVALID_EMAIL_OR_PASSWORD")
		if string(locked.Body) != string(wrong.Body) {
			t.Fatalf("locked answer %s differs from wrong-password answer %s", locked.Body, wrong.Body)
		}
		app.Clock.Advance(50 * time.Second)
		harness.MustSignInFails(t, app, "ada@example.com", pw)
		app.Clock.Advance(11 * time.Second)
		harness.MustSignIn(t, app.NewClient(t), "ada@example.com", pw)
	})
	t.Run("success_resets_the_count", func(t *testing.T) {
		harness.MustSignUp(t, app.NewClient(t), "Bob", "bob@example.com", pw)
		for round := 0; round < 2; round++ {
			for i := 0; i < threshold-1; i++ {
				harness.MustSignInFails(t, app, "bob@example.com", "not the password")
			}
			harness.MustSignIn(t, app.NewClient(t), "bob@example.com", pw)
		}
	})
}

// Ensure new passwords are stored as argon2id PHC strings with OWASP's
// parameters, never in the clear.
// It keeps a fresh application: it takes production hashing, and reads every stored hash.
func TestFramework_password_hash_is_argon2id(t *testing.T) {
	t.Parallel()
	harness.ForStores(t, harness.SQLOnly(harness.StoresThatMatter), harness.Env(harness.FwQuick, harness.ProductionHashing), func(t *testing.T, app *harness.App) {
		const pw = "correct horse battery"
		harness.MustSignUp(t, app.NewClient(t), "Ada", "ada@example.com", pw)
		var hashes []string
		if err := harness.MustDB(t, app).Raw("SELECT hash FROM credentials").Scan(&hashes).Error; err != nil {
			t.Fatal(err)
		}
		if len(hashes) != 1 || !strings.HasPrefix(hashes[0], "$argon2id$v=19$m=19456,t=2,p=1$") || strings.Contains(hashes[0], pw) {
			t.Fatalf("stored hashes = %q, want one argon2id PHC string", hashes)
		}
	})
}

// Ensure hashing is bounded: a burst of fwBurst (500; fewer under the race
// detector) concurrent sign-ins all get an answer, and the heap stays far
// below what as many simultaneous 19 MiB argon2id hashes would take (about
// 9.5 GiB for 500). Not parallel, so that no other test's heap is measured.
// It keeps a fresh application: it takes production hashing, and measures the process's heap.
func TestFramework_hashing_is_bounded(t *testing.T) {
	const burst, limit = fwBurst, 600 << 20
	app := harness.MustStart(t, harness.StoreMemory, harness.Env(harness.FwQuick, harness.ProductionHashing))
	harness.MustSignUp(t, app.NewClient(t), "Ada", "ada@example.com", "correct horse battery")

	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()

	statuses := make([]int, burst)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range burst {
		wg.Go(func() {
			<-start
			body := harness.MustCredentials(t, "ada@example.com", "correct horse battery")
			if i%2 == 1 {
				body = harness.MustCredentials(t, "nobody@example.com", "correct horse battery")
			}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, app.URL+"/api/auth/sign-in/email", strings.NewReader(body))
			if err != nil {
				return
			}
			req.Header.Set("Content-Type", "application/json")
			res, err := app.Client().Do(req)
			if err != nil {
				return // statuses[i] stays 0
			}
			res.Body.Close()
			statuses[i] = res.StatusCode
		})
	}
	close(start)
	wg.Wait()
	close(stop)
	<-sampled

	for i, s := range statuses {
		want := http.StatusOK
		if i%2 == 1 {
			want = http.StatusUnauthorized
		}
		if s != want {
			t.Fatalf("request %d answered %d, want %d", i, s, want)
		}
	}
	if p := peak.Load(); p > limit {
		t.Fatalf("peak heap %d MiB, want under %d MiB", p>>20, limit>>20)
	} else {
		t.Logf("peak heap %d MiB during %d concurrent sign-ins", p>>20, burst)
	}
}
