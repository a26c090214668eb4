package command_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/gatehouse/gatehouse/adapters/jobs"
	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/adapters/passwordhash"
	"github.com/gatehouse/gatehouse/adapters/system"
	"github.com/gatehouse/gatehouse/application/command"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// outbox records mails instead of sending them.
type outbox struct {
	mu    sync.Mutex
	mails []domain.Mail
}

func (o *outbox) Send(_ context.Context, m domain.Mail) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.mails = append(o.mails, m)
	return nil
}

// Reserve implements ports.Mailer: an outbox always has room.
func (o *outbox) Reserve(context.Context) (ports.MailSlot, error) { return outboxSlot{o}, nil }

type outboxSlot struct{ *outbox }

func (outboxSlot) Release() {}

func (o *outbox) last(t *testing.T, kind domain.MailKind) domain.Mail {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := len(o.mails) - 1; i >= 0; i-- {
		if o.mails[i].Kind == kind {
			return o.mails[i]
		}
	}
	t.Fatalf("no %s mail among %d", kind, len(o.mails))
	return domain.Mail{}
}

type noBlocklist struct{}

func (noBlocklist) Contains(string) bool { return false }

// world is every use case on one in-memory store with a fake clock.
type world struct {
	db       *memory.DB
	clock    *fakeClock
	mail     *outbox
	settings command.AuthSettings
	signUp   *command.SignUpHandler
	signIn   *command.SignInHandler
	auth     *command.AuthenticateHandler
	reset    *command.ResetPasswordHandler
	users    *memory.UserRepository
	creds    *memory.CredentialRepository
	jobs     *jobs.Queue
}

// settle waits until the jobs queued so far have run: they run in order,
// so a job queued now runs after them.
func (w *world) settle(t *testing.T) {
	t.Helper()
	done := make(chan struct{})
	if err := w.jobs.Enqueue(t.Context(), "settle", func(context.Context) error { close(done); return nil }); err != nil {
		t.Fatal(err)
	}
	<-done
}

func newWorld(t *testing.T, requireVerification bool) *world {
	t.Helper()
	w := &world{db: memory.NewDB(), clock: &fakeClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}, mail: &outbox{}}
	w.settings = command.AuthSettings{
		BaseURL: "https://id.example.com", ProductName: "Gatehouse",
		Sessions:  domain.SessionPolicy{Lifetime: 7 * 24 * time.Hour, ShortLifetime: 24 * time.Hour, UpdateAge: 24 * time.Hour, FreshAge: 24 * time.Hour},
		Passwords: domain.PasswordPolicy{MinLength: 8, MaxLength: 128},
		Lockout:   domain.LockoutPolicy{Threshold: 3, Cooldown: 15 * time.Minute},
		LinkTTL:   time.Hour, RequireEmailVerification: requireVerification,
	}
	w.users, w.creds = memory.NewUserRepository(w.db), memory.NewCredentialRepository(w.db)
	sessions, links := memory.NewSessionRepository(w.db), memory.NewVerificationRepository(w.db)
	hasher := passwordhash.New(passwordhash.Params{MemoryKiB: 1024, Iterations: 1, Parallelism: 1}, 4)
	tokens, ids := system.NewTokenGenerator(), system.NewIDGenerator()
	w.jobs = jobs.NewQueue(10, 0, nil)
	t.Cleanup(func() { _ = w.jobs.Close(context.Background()) })
	w.signUp = command.NewSignUpHandler(w.creds, sessions, links, hasher, noBlocklist{}, w.mail, tokens, ids, w.clock, w.settings)
	w.signIn = command.NewSignInHandler(w.users, w.creds, sessions, links, hasher, w.mail, tokens, ids, w.clock, w.settings, nil)
	w.auth = command.NewAuthenticateHandler(sessions, w.clock, w.settings)
	w.reset = command.NewResetPasswordHandler(w.users, w.creds, sessions, links, hasher, noBlocklist{}, w.mail, tokens, ids, w.clock, w.jobs, w.settings)
	return w
}

const pw = "correct horse battery"

func (w *world) mustSignUp(t *testing.T, email string) *command.SignUpResult {
	t.Helper()
	res, err := w.signUp.Handle(t.Context(), command.SignUp{Name: "Ada", Email: email, Password: pw, RememberMe: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func mustCode(t *testing.T, err error, code string) {
	t.Helper()
	var de *domain.Error
	if !errors.As(err, &de) || de.Code != code {
		t.Fatalf("err = %v, want code %s", err, code)
	}
}

func TestSignIn_rehashes_imported_hashes(t *testing.T) {
	bc, err := bcrypt.GenerateFromPassword([]byte("password123"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, hash string
	}{
		// Produced by Node's crypto.scryptSync exactly as Better Auth hashes.
		{"better_auth_scrypt", "2145a75044393d443f7df0da1fae7872:c53845b9707a63b1deb2185d0b10764dc2493d1c4889acb0b4289fc9f4ae794f18699029ff5ec1f3e34573153499c2a44aa0591ab8548e49df52bba30a3ffecc"},
		{"bcrypt", string(bc)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, false)
			u := w.mustSignUp(t, "ada@example.com").User
			if err := w.creds.Update(t.Context(), u.ID(), func(c *domain.Credential) error { c.SetHash(tt.hash, w.clock.Now()); return nil }); err != nil {
				t.Fatal(err)
			}
			if _, err := w.signIn.Handle(t.Context(), command.SignIn{Email: "ada@example.com", Password: "password123", RememberMe: true}); err != nil {
				t.Fatalf("sign-in with the imported hash: %v", err)
			}
			c, err := w.creds.Get(t.Context(), u.ID())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(c.Hash(), "$argon2id$") {
				t.Fatalf("hash after sign-in = %q, want argon2id", c.Hash()[:12])
			}
			if _, err := w.signIn.Handle(t.Context(), command.SignIn{Email: "ada@example.com", Password: "password123"}); err != nil {
				t.Fatalf("sign-in after rehash: %v", err)
			}
		})
	}
}

func TestSignIn_lockout_and_cooldown(t *testing.T) {
	w := newWorld(t, false)
	w.mustSignUp(t, "ada@example.com")
	bad := command.SignIn{Email: "ada@example.com", Password: "wrong password"}
	good := command.SignIn{Email: "ada@example.com", Password: pw}
	for range 3 {
		_, err := w.signIn.Handle(t.Context(), bad)
		mustCode(t, err, "auth.invalid_credentials")
	}
	_, err := w.signIn.Handle(t.Context(), good)
	mustCode(t, err, "auth.invalid_credentials") // locked: the right password is refused alike
	w.clock.Advance(15 * time.Minute)
	if _, err := w.signIn.Handle(t.Context(), good); err != nil {
		t.Fatalf("after the cooldown: %v", err)
	}
	for range 2 {
		_, _ = w.signIn.Handle(t.Context(), bad)
	}
	if _, err := w.signIn.Handle(t.Context(), good); err != nil {
		t.Fatalf("success resets the count, so 2 failures do not lock: %v", err)
	}
}

func TestSignUp_taken_address_is_not_revealed_when_verification_is_required(t *testing.T) {
	w := newWorld(t, true)
	first := w.mustSignUp(t, "ada@example.com")
	second, err := w.signUp.Handle(t.Context(), command.SignUp{Name: "Eve", Email: "ADA@example.com", Password: pw})
	if err != nil {
		t.Fatalf("second sign-up: %v", err)
	}
	if first.Token != "" || second.Token != "" || second.User.ID() == first.User.ID() {
		t.Fatalf("tokens %q %q, ids %s %s", first.Token, second.Token, first.User.ID(), second.User.ID())
	}
	w.mail.last(t, domain.MailAccountExists)
	_, err = w.signIn.Handle(t.Context(), command.SignIn{Email: "ada@example.com", Password: pw})
	mustCode(t, err, "auth.email_not_verified")
}

func TestSignUp_taken_address_is_422_code_without_verification(t *testing.T) {
	w := newWorld(t, false)
	w.mustSignUp(t, "ada@example.com")
	_, err := w.signUp.Handle(t.Context(), command.SignUp{Name: "Eve", Email: "ada@example.com", Password: pw})
	mustCode(t, err, "user.email_exists")
}

func TestAuthenticate_refresh_and_expiry(t *testing.T) {
	w := newWorld(t, false)
	res := w.mustSignUp(t, "ada@example.com")
	got, err := w.auth.Handle(t.Context(), command.Authenticate{Token: res.Token, Refresh: true})
	if err != nil || got.Refreshed {
		t.Fatalf("fresh session: refreshed=%v err=%v", got != nil && got.Refreshed, err)
	}
	w.clock.Advance(25 * time.Hour)
	got, err = w.auth.Handle(t.Context(), command.Authenticate{Token: res.Token, Refresh: true})
	if err != nil || !got.Refreshed || !got.Session.ExpiresAt().Equal(w.clock.Now().Add(7*24*time.Hour)) {
		t.Fatalf("after a day: %+v, %v", got, err)
	}
	w.clock.Advance(7*24*time.Hour + time.Second)
	_, err = w.auth.Handle(t.Context(), command.Authenticate{Token: res.Token})
	mustCode(t, err, "UNAUTHORIZED")
}

func TestResetPassword_link_works_once_and_ends_sessions(t *testing.T) {
	w := newWorld(t, false)
	res := w.mustSignUp(t, "ada@example.com")
	if err := w.reset.Request(t.Context(), command.RequestPasswordReset{Email: "ada@example.com"}); err != nil {
		t.Fatal(err)
	}
	w.settle(t)
	link := w.mail.last(t, domain.MailResetPassword).Link
	token := link[strings.LastIndex(link, "/")+1:]
	mustCode(t, w.reset.Reset(t.Context(), command.ResetPassword{Token: token, NewPassword: "short"}), domain.CodePasswordTooShort)
	if err := w.reset.Reset(t.Context(), command.ResetPassword{Token: token, NewPassword: "a new long passphrase"}); err != nil {
		t.Fatalf("a refused password must leave the link working: %v", err)
	}
	mustCode(t, w.reset.Reset(t.Context(), command.ResetPassword{Token: token, NewPassword: "another passphrase"}), "password_reset.invalid_token")
	_, err := w.auth.Handle(t.Context(), command.Authenticate{Token: res.Token})
	mustCode(t, err, "UNAUTHORIZED")
	if err := w.reset.Request(t.Context(), command.RequestPasswordReset{Email: "nobody@example.com"}); err != nil {
		t.Fatalf("unknown address: %v", err)
	}
}

func TestResetPassword_expired_link_is_refused(t *testing.T) {
	w := newWorld(t, false)
	w.mustSignUp(t, "ada@example.com")
	if err := w.reset.Request(t.Context(), command.RequestPasswordReset{Email: "ada@example.com"}); err != nil {
		t.Fatal(err)
	}
	w.settle(t)
	link := w.mail.last(t, domain.MailResetPassword).Link
	w.clock.Advance(time.Hour)
	mustCode(t, w.reset.Reset(t.Context(), command.ResetPassword{Token: link[strings.LastIndex(link, "/")+1:], NewPassword: "a new long passphrase"}), "password_reset.invalid_token")
}
