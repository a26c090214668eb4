// Package usecasetest is the world the use-case packages' black-box tests
// run in: every use case on one in-memory store, a settable clock, an
// outbox for mail, and helpers that sign users up and check errors. It lives
// outside application because it builds the memory adapters, which
// application may not import (make archcheck, rule 1); only tests import it.
package usecasetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/httpapi/backend"
	"github.com/gatehouse/gatehouse/adapters/jobs"
	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/adapters/passwordhash"
	"github.com/gatehouse/gatehouse/adapters/ratelimit"
	"github.com/gatehouse/gatehouse/adapters/system"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/organization"
	"github.com/gatehouse/gatehouse/application/servicekey"
	"github.com/gatehouse/gatehouse/application/usecase"
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

func (o *outbox) Last(t *testing.T, kind domain.MailKind) domain.Mail {
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

// Count returns how many mails of kind were sent.
func (o *outbox) Count(kind domain.MailKind) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, m := range o.mails {
		if m.Kind == kind {
			n++
		}
	}
	return n
}

type noBlocklist struct{}

func (noBlocklist) Contains(string) bool { return false }

// World is every use case on one in-memory store with a fake clock.
type World struct {
	DB       *memory.DB
	Clock    *fakeClock
	Mail     *outbox
	Settings usecase.AuthSettings
	// Registration, SignIns, Sessions and Passwords are account's
	// services on the world's stores.
	Registration *account.Registration
	SignIns      *account.SignIns
	Sessions     *account.Sessions
	Passwords    *account.Passwords
	Users        *memory.UserRepository
	Creds        *memory.CredentialRepository
	// Events writes the changes' events to Outbox, in the store's unit of
	// work, as the trusted API's objects.
	Events *usecase.Events
	Outbox *memory.Outbox
	jobs   *jobs.Queue
}

// Settle waits until the jobs queued so far have run: they run in order,
// so a job queued now runs after them.
func (w *World) Settle(t *testing.T) {
	t.Helper()
	done := make(chan struct{})
	if err := w.jobs.Enqueue(t.Context(), "settle", func(context.Context) error { close(done); return nil }); err != nil {
		t.Fatal(err)
	}
	<-done
}

func NewWorld(t *testing.T, requireVerification bool) *World {
	t.Helper()
	w := &World{DB: memory.NewDB(), Clock: &fakeClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}, Mail: &outbox{}}
	w.Settings = usecase.AuthSettings{
		BaseURL: "https://id.example.com", ProductName: "Gatehouse",
		Sessions:  domain.SessionPolicy{Lifetime: 7 * 24 * time.Hour, ShortLifetime: 24 * time.Hour, UpdateAge: 24 * time.Hour, FreshAge: 24 * time.Hour},
		Passwords: domain.PasswordPolicy{MinLength: 8, MaxLength: 128},
		Lockout:   domain.LockoutPolicy{Threshold: 3, Cooldown: 15 * time.Minute},
		LinkTTL:   time.Hour, RequireEmailVerification: requireVerification,
		StepUpWindow: 10 * time.Minute,
	}
	w.Users, w.Creds = memory.NewUserRepository(w.DB), memory.NewCredentialRepository(w.DB)
	sessions, links := memory.NewSessionRepository(w.DB), memory.NewVerificationRepository(w.DB)
	hasher := passwordhash.New(passwordhash.Params{MemoryKiB: 1024, Iterations: 1, Parallelism: 1}, 4)
	tokens, ids := system.NewTokenGenerator(), system.NewIDGenerator()
	w.Outbox = memory.NewOutbox(w.DB)
	w.Events = usecase.NewEvents(memory.NewUnitOfWork(w.DB), w.Outbox, backend.NewEventEncoder(), ids, w.Clock,
		memory.NewPasskeyRepository(w.DB), memory.NewLinkedAccountRepository(w.DB), memory.NewOrganizationRepository(w.DB))
	w.jobs = jobs.NewQueue(10, 0, nil)
	t.Cleanup(func() { _ = w.jobs.Close(context.Background()) })
	limiter := ratelimit.NewMemory()
	t.Cleanup(limiter.Close)
	w.Registration = account.NewRegistration(w.Users, w.Creds, sessions, links, hasher, noBlocklist{}, w.Mail, w.Events, tokens, ids, w.Clock, w.jobs, w.Settings)
	w.SignIns = account.NewSignIns(w.Creds, sessions, links, hasher, w.Mail, w.Events, tokens, ids, w.Clock, limiter, w.Settings, nil)
	w.Sessions = account.NewSessions(sessions, nil, w.Events, w.Clock, w.Settings)
	w.Passwords = account.NewPasswords(w.Users, w.Creds, sessions, links, hasher, noBlocklist{}, w.Mail, memory.NewPasskeyRepository(w.DB), w.Events, tokens, ids, w.Clock, w.jobs, w.Settings)
	return w
}

// AuditorOf records to log, writing its changes' events to the world's
// outbox.
func (w *World) AuditorOf(log ports.AuditLog) usecase.Auditor {
	return usecase.NewAuditor(log, w.Events, system.NewIDGenerator(), w.Clock)
}

const Password = "correct horse battery"

func (w *World) MustSignUp(t *testing.T, email string) *account.SignUpResult {
	t.Helper()
	res, err := w.Registration.SignUp(t.Context(), account.SignUp{Name: "Ada", Email: email, Password: Password, RememberMe: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func MustCode(t *testing.T, err error, code string) {
	t.Helper()
	var de *domain.Error
	if !errors.As(err, &de) || de.Code != code {
		t.Fatalf("err = %v, want code %s", err, code)
	}
}

// AdminWorld adds organizations, administration and service keys to world.
type AdminWorld struct {
	*World
	Orgs  *organization.Organizations
	Admin *admin.Administration
	Keys  *servicekey.ServiceKeys
	Audit *memory.AuditLog
	// Auditor records to Audit, its changes' events going to Outbox.
	Auditor usecase.Auditor
	Admins  domain.PlatformAdmins
}

func NewAdminWorld(t *testing.T) *AdminWorld {
	t.Helper()
	w := &AdminWorld{World: NewWorld(t, false)}
	sessions := memory.NewSessionRepository(w.DB)
	w.Audit = memory.NewAuditLog(w.DB)
	tokens, ids := system.NewTokenGenerator(), system.NewIDGenerator()
	w.Auditor = w.AuditorOf(w.Audit)
	hasher := passwordhash.New(passwordhash.Params{MemoryKiB: 1024, Iterations: 1, Parallelism: 1}, 4)
	w.Admins = domain.PlatformAdmins{Emails: []domain.Email{"boss@example.com"}}
	adminSettings := usecase.AdminSettings{Admins: w.Admins, ImpersonationTTL: time.Hour}
	passkeys := memory.NewPasskeyRepository(w.DB)
	w.Orgs = organization.NewOrganizations(memory.NewOrganizationRepository(w.DB), w.Users, sessions, w.Mail, w.Auditor, passkeys, ids, w.Clock,
		organization.OrganizationSettings{InvitationTTL: 48 * time.Hour, InvitationLimit: 2, InvitationURL: "https://app.example.com/invite/{id}", Admins: w.Admins})
	w.Admin = admin.NewAdministration(w.Users, w.Creds, memory.NewVerificationRepository(w.DB), sessions, hasher, noBlocklist{}, w.Auditor, passkeys, tokens, ids, w.Clock, w.Settings, adminSettings)
	w.Keys = servicekey.NewServiceKeys(memory.NewServiceKeyRepository(w.DB), w.Auditor, passkeys, tokens, ids, w.Clock, adminSettings, w.Settings)
	return w
}

// SignedIn signs a new, verified user up and returns their principal.
func (w *AdminWorld) SignedIn(t *testing.T, email string) usecase.Principal {
	t.Helper()
	p, _ := w.SignedInWithToken(t, email)
	return p
}

// SignedInWithToken is signedIn that also returns the session's bearer token.
func (w *AdminWorld) SignedInWithToken(t *testing.T, email string) (usecase.Principal, string) {
	t.Helper()
	w.MustSignUp(t, email)
	res, err := w.SignIns.SignIn(t.Context(), account.SignIn{Email: email, Password: Password, RememberMe: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Users.Update(t.Context(), res.User.ID(), func(u *domain.User) error { u.MarkEmailVerified(w.Clock.Now()); return nil }); err != nil {
		t.Fatal(err)
	}
	a, err := w.Sessions.Authenticate(t.Context(), account.Authenticate{Token: res.Token})
	if err != nil {
		t.Fatal(err)
	}
	return a.Principal, res.Token
}

func (w *AdminWorld) Entries(t *testing.T, action string) []domain.AuditEntry {
	t.Helper()
	es, err := w.Audit.List(t.Context(), ports.AuditQuery{Action: action, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// KeyReq is a request of the service key "key-1" holding scopes.
func KeyReq(scopes ...domain.Scope) usecase.TrustedRequest {
	k := domain.RehydrateServiceKey("key-1", "backend", scopes, "abcd", "cli",
		time.Time{}, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Time{}, time.Time{})
	return usecase.TrustedRequest{Key: k, RequestID: "req-1", IPAddress: "203.0.113.9"}
}

// MustField fails unless err has code and names field.
func MustField(t *testing.T, err error, code, field string) {
	t.Helper()
	MustCode(t, err, code)
	var de *domain.Error
	errors.As(err, &de)
	for _, f := range de.Fields {
		if f.Field == field {
			return
		}
	}
	t.Fatalf("err %v names %v, want %s", err, de.Fields, field)
}

// MustFail fails unless err has code and kind.
func MustFail(t *testing.T, err error, kind domain.Kind, code string) {
	t.Helper()
	MustCode(t, err, code)
	if got := domain.KindOf(err); got != kind {
		t.Fatalf("kind of %v = %v, want %v", err, got, kind)
	}
}
