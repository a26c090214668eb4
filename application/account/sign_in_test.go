package account_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/adapters/passwordhash"
	"github.com/gatehouse/gatehouse/adapters/ratelimit"
	"github.com/gatehouse/gatehouse/adapters/system"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// gatedCredentials is the memory credential store whose updates wait for
// open, as a slow database would.
type gatedCredentials struct {
	*memory.CredentialRepository
	open chan struct{}
}

func (g gatedCredentials) Update(ctx context.Context, id domain.UserID, fn func(c *domain.Credential) error) error {
	<-g.open
	return g.CredentialRepository.Update(ctx, id, fn)
}

// Ensure a wrong password is answered without waiting for the failed
// attempt to be written (that write made a known address slower than an
// unknown one), and that the lockout still counts every failure: the right
// password after threshold wrong ones waits for their writes and is refused.
func TestSignIn_failed_attempts_are_written_after_the_answer(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	w.MustSignUp(t, "ada@example.com")
	creds := gatedCredentials{w.Creds, make(chan struct{})}
	hasher := passwordhash.New(passwordhash.Params{MemoryKiB: 1024, Iterations: 1, Parallelism: 1}, 4)
	limiter := ratelimit.NewMemory()
	t.Cleanup(limiter.Close)
	signIn := account.NewSignIns(creds, memory.NewSessionRepository(w.DB), memory.NewVerificationRepository(w.DB),
		hasher, w.Mail, w.Events, system.NewTokenGenerator(), system.NewIDGenerator(), w.Clock, limiter, w.Settings, nil)

	// The writes are held back; each wrong password must still be answered.
	for i := range w.Settings.Lockout.Threshold {
		answered := make(chan error, 1)
		go func() {
			_, err := signIn.SignIn(context.Background(), account.SignIn{Email: "ada@example.com", Password: "wrong password"})
			answered <- err
		}()
		select {
		case err := <-answered:
			usecasetest.MustCode(t, err, "auth.invalid_credentials")
		case <-time.After(10 * time.Second): // a hang detector, not a timing
			close(creds.open)
			t.Fatalf("wrong password %d waits for its failed-attempt write", i+1)
		}
	}
	right := make(chan error, 1)
	go func() {
		_, err := signIn.SignIn(context.Background(), account.SignIn{Email: "ada@example.com", Password: usecasetest.Password})
		right <- err
	}()
	close(creds.open)
	usecasetest.MustCode(t, <-right, "auth.invalid_credentials")
	c, err := w.Creds.Get(t.Context(), mustUserID(t, w, "ada@example.com"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.FailedAttempts(), w.Settings.Lockout.Threshold; got != want || !c.IsLocked(w.Clock.Now()) {
		t.Fatalf("failed attempts = %d (locked %v), want %d and locked", got, c.IsLocked(w.Clock.Now()), want)
	}
}

func mustUserID(t *testing.T, w *usecasetest.World, email string) domain.UserID {
	t.Helper()
	u, err := w.Users.GetByEmail(t.Context(), domain.Email(email))
	if err != nil {
		t.Fatal(err)
	}
	return u.ID()
}
