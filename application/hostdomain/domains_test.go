package hostdomain_test

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/adapters/system"
	"github.com/gatehouse/gatehouse/application/hostdomain"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// fakeResolver answers from maps, or fails every lookup with err. With gate
// set, each lookup first waits for the gate to close.
type fakeResolver struct {
	mu    sync.Mutex
	txt   map[string][]string
	cname map[string]string
	err   error
	gate  chan struct{}
	calls int
}

func (r *fakeResolver) lookup() (chan struct{}, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	return r.gate, r.err
}

func (r *fakeResolver) LookupTXT(ctx context.Context, name string) ([]string, error) {
	gate, err := r.lookup()
	if gate != nil {
		<-gate
	}
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.txt[name], nil
}

func (r *fakeResolver) LookupCNAME(ctx context.Context, name string) (string, error) {
	gate, err := r.lookup()
	if gate != nil {
		<-gate
	}
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cname[name], nil
}

func (r *fakeResolver) set(f func(r *fakeResolver)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(r)
}

var domainPolicy = domain.VerificationPolicy{Window: time.Hour, Grace: 10 * time.Minute, Interval: time.Minute, MaxInterval: 8 * time.Minute, Recheck: 24 * time.Hour}

// domainWorld is the domain use cases on memory stores, a fake resolver
// and the world's fake clock.
type domainWorld struct {
	*usecasetest.AdminWorld
	dns     *fakeResolver
	domains *hostdomain.Domains
	repo    *memory.DomainRepository
	req     usecase.TrustedRequest
}

func newDomainWorld(t *testing.T, cnameTarget string) *domainWorld {
	t.Helper()
	w := &domainWorld{AdminWorld: usecasetest.NewAdminWorld(t), dns: &fakeResolver{txt: map[string][]string{}, cname: map[string]string{}}}
	w.repo = memory.NewDomainRepository(w.DB)
	w.domains = hostdomain.NewDomains(w.repo, memory.NewOrganizationRepository(w.DB), w.dns, w.Auditor, system.NewTokenGenerator(),
		system.NewIDGenerator(), w.Clock, hostdomain.DomainSettings{CNAMETarget: cnameTarget, Policy: domainPolicy}, usecase.AdminSettings{Admins: w.Admins})
	key, err := domain.NewServiceKey("key-1", "backend", []domain.Scope{domain.ScopeAll}, "gh_sk_secret", "cli", time.Time{}, w.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	w.req = usecase.TrustedRequest{Key: key, RequestID: "req-1", IPAddress: "192.0.2.1"}
	return w
}

func (w *domainWorld) mustCreate(t *testing.T, hostname string) *domain.Domain {
	t.Helper()
	d, err := w.domains.Create(t.Context(), w.req, hostdomain.CreateDomain{Hostname: hostname})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (w *domainWorld) mustCheck(t *testing.T) hostdomain.CheckReport {
	t.Helper()
	report, err := w.domains.CheckDue(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return report
}

func (w *domainWorld) mustGet(t *testing.T, id domain.DomainID) *domain.Domain {
	t.Helper()
	d, err := w.domains.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (w *domainWorld) publish(d *domain.Domain) {
	txt := d.Records()[0]
	w.dns.set(func(r *fakeResolver) { r.txt[txt.Name] = []string{txt.Value} })
}

var tokenPattern = regexp.MustCompile(`^gatehouse-verification=[A-Za-z0-9]{32}$`)

// Ensure a claim is normalised, carries a fresh 32-character token, asks for
// the CNAME only when a target is configured, and refuses a missing
// organization and a taken hostname naming the field.
func TestDomains_Create(t *testing.T) {
	w := newDomainWorld(t, "edge.gatehouse.test")
	d := w.mustCreate(t, "Shop.Example.COM.")
	rs := d.Records()
	if d.Hostname() != "shop.example.com" || d.Status() != domain.DomainPending || !d.NextCheckAt().Equal(w.Clock.Now()) || len(rs) != 2 ||
		!tokenPattern.MatchString(rs[0].Value) || rs[1].Type != domain.RecordCNAME || rs[1].Value != "edge.gatehouse.test" || !rs[1].Required {
		t.Fatalf("created %+v with records %+v", d.State(), rs)
	}
	if other := w.mustCreate(t, "shop.example.net"); other.Records()[0].Value == rs[0].Value {
		t.Fatal("two domains share a token")
	}
	if plain := newDomainWorld(t, "").mustCreate(t, "shop.example.com"); len(plain.Records()) != 1 {
		t.Fatalf("without a CNAME target: %+v", plain.Records())
	}

	_, err := w.domains.Create(t.Context(), w.req, hostdomain.CreateDomain{Hostname: "free.example.com", OrganizationID: "no-such-org"})
	mustDomainField(t, err, "organization.not_found", "organizationId")
	_, err = w.domains.Create(t.Context(), w.req, hostdomain.CreateDomain{Hostname: "SHOP.example.com"})
	mustDomainField(t, err, "domain.hostname_taken", "hostname")
	_, err = w.domains.Create(t.Context(), w.req, hostdomain.CreateDomain{Hostname: "co.uk"})
	mustDomainField(t, err, "domain.invalid_hostname", "hostname")
	if got := len(w.Entries(t, "domains.create")); got != 5 {
		t.Fatalf("%d domains.create entries, want 5 (2 created, 3 refused)", got)
	}
}

func mustDomainField(t *testing.T, err error, code, location string) {
	t.Helper()
	var de *domain.Error
	if !errors.As(err, &de) || de.Code != code || len(de.Fields) != 1 || de.Fields[0].Field != location {
		t.Fatalf("err = %#v, want %s at %s", err, code, location)
	}
}

// Ensure a failed lookup proves nothing: the status, the records and the
// last check stand, whatever the window or grace, and the check comes back
// with backoff; a pass ignores domains not yet due.
func TestDomains_CheckDue_lookup_failure_postpones(t *testing.T) {
	tests := []struct {
		name   string
		status domain.DomainStatus
	}{
		{"pending_stays_pending_past_the_window", domain.DomainPending},
		{"verified_stays_verified_past_the_grace", domain.DomainVerified},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newDomainWorld(t, "")
			d := w.mustCreate(t, "shop.example.com")
			if tt.status == domain.DomainVerified {
				w.publish(d)
				w.mustCheck(t)
				w.Clock.Advance(domainPolicy.Recheck)
			}
			before := w.mustGet(t, d.ID())
			w.dns.set(func(r *fakeResolver) { r.err = errors.New("SERVFAIL") })
			delays := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute}
			for len(delays) < 10 {
				delays = append(delays, domainPolicy.MaxInterval) // 63 minutes in all, past the window
			}
			for i, delay := range delays {
				report := w.mustCheck(t)
				if len(report.Checks) != 1 || report.Checks[0].LookupErr == nil || report.Checks[0].Changed() {
					t.Fatalf("pass %d report = %+v", i, report)
				}
				got := w.mustGet(t, d.ID())
				if got.Status() != tt.status || got.Attempts() != before.Attempts()+i+1 || !got.NextCheckAt().Equal(w.Clock.Now().Add(delay)) ||
					!got.LastCheckedAt().Equal(before.LastCheckedAt()) || got.Records()[0].Status != before.Records()[0].Status {
					t.Fatalf("after failed pass %d: %+v, before %+v", i, got.State(), before.State())
				}
				if report := w.mustCheck(t); report.Due != 0 {
					t.Fatalf("not yet due, yet checked: %+v", report)
				}
				w.Clock.Advance(delay)
			}
			if w.Clock.Now().Sub(before.CreatedAt()) < domainPolicy.Window {
				t.Fatal("the test did not outlast the window")
			}
			// DNS answers again: the next pass concludes.
			w.dns.set(func(r *fakeResolver) { r.err = nil })
			w.mustCheck(t)
			want := map[domain.DomainStatus]domain.DomainStatus{domain.DomainPending: domain.DomainFailed, domain.DomainVerified: domain.DomainVerified}[tt.status]
			if got := w.mustGet(t, d.ID()); got.Status() != want || got.Attempts() != 0 && want == domain.DomainVerified {
				t.Fatalf("after DNS answered: %+v", got.State())
			}
		})
	}
}

// waitLookups waits until n lookups have started.
func (w *domainWorld) waitLookups(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		w.dns.mu.Lock()
		calls := w.dns.calls
		w.dns.mu.Unlock()
		if calls == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d lookups started, want %d", calls, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Ensure a second verifier running while the first looks a domain up finds
// nothing due: the first one's claim holds the domain, which is looked up
// and checked once.
func TestDomains_CheckDue_concurrent_verifiers_check_once(t *testing.T) {
	w := newDomainWorld(t, "")
	d := w.mustCreate(t, "shop.example.com")
	gate := make(chan struct{})
	w.dns.set(func(r *fakeResolver) { r.gate = gate })
	var wg sync.WaitGroup
	var first hostdomain.CheckReport
	wg.Go(func() { first = w.mustCheck(t) })
	w.waitLookups(t, 1)
	w.dns.set(func(r *fakeResolver) { r.gate = nil }) // a second lookup would not wait
	if second := w.mustCheck(t); second.Due != 0 || len(second.Checks) != 0 {
		t.Fatalf("second verifier = %+v, want nothing due", second)
	}
	close(gate)
	wg.Wait()
	w.waitLookups(t, 1) // and no more
	if len(first.Checks) != 1 {
		t.Fatalf("first verifier = %+v, want one check", first)
	}
	if got := w.mustGet(t, d.ID()); got.Attempts() != 1 || !got.NextCheckAt().Equal(w.Clock.Now().Add(domainPolicy.Interval)) {
		t.Fatalf("attempts = %d, next check %v; want 1, after the interval", got.Attempts(), got.NextCheckAt())
	}
}

// Ensure a claim that outlives its lease (a verifier stuck, or dead) lets
// another verifier take the domain, and that the stuck verifier's late
// outcome is then dropped rather than applied over the newer check.
func TestDomains_CheckDue_expired_claim_is_taken_over(t *testing.T) {
	w := newDomainWorld(t, "")
	d := w.mustCreate(t, "shop.example.com")
	gate := make(chan struct{})
	w.dns.set(func(r *fakeResolver) { r.gate = gate })
	var wg sync.WaitGroup
	var stuck hostdomain.CheckReport
	wg.Go(func() { stuck = w.mustCheck(t) })
	w.waitLookups(t, 1)
	w.Clock.Advance(hostdomain.DefaultCheckLease - time.Second)
	if early := w.mustCheck(t); early.Due != 0 {
		t.Fatalf("within the lease = %+v, want nothing due", early)
	}
	w.Clock.Advance(time.Second)
	w.dns.set(func(r *fakeResolver) { r.gate = nil })
	if late := w.mustCheck(t); late.Due != 1 || len(late.Checks) != 1 {
		t.Fatalf("after the lease = %+v, want the domain taken over and checked", late)
	}
	close(gate)
	wg.Wait()
	if stuck.Due != 1 || len(stuck.Checks) != 0 {
		t.Fatalf("stuck verifier = %+v, want its outcome dropped", stuck)
	}
	if got := w.mustGet(t, d.ID()); got.Attempts() != 1 {
		t.Fatalf("attempts = %d, want the one check that kept its claim", got.Attempts())
	}
}

// Ensure only platform administrators may change a domain, refusals audited,
// and that bad changes are refused before anything is read.
func TestDomains_Update_rules(t *testing.T) {
	w := newDomainWorld(t, "")
	d := w.mustCreate(t, "shop.example.com")
	boss := usecase.AdminRequest{Principal: w.SignedIn(t, "boss@example.com")}
	eve := usecase.AdminRequest{Principal: w.SignedIn(t, "eve@example.com")}
	reason, blank := "checked by phone", "  "

	if _, err := w.domains.Update(t.Context(), eve, d.ID(), hostdomain.UpdateDomain{Recheck: true}); !errors.Is(err, domain.ErrNotPlatformAdmin) {
		t.Fatalf("non-admin: %v", err)
	}
	for _, tt := range []struct {
		name string
		cmd  hostdomain.UpdateDomain
		code string
	}{
		{"empty", hostdomain.UpdateDomain{}, "request.empty_patch"},
		{"recheck_and_verify", hostdomain.UpdateDomain{Recheck: true, VerifyReason: &reason}, "request.conflicting_fields"},
		{"blank_reason", hostdomain.UpdateDomain{VerifyReason: &blank}, "request.invalid_reason"},
		{"unknown_organization", hostdomain.UpdateDomain{SetOrganization: true, OrganizationID: "nope"}, "organization.not_found"},
	} {
		if _, err := w.domains.Update(t.Context(), boss, d.ID(), tt.cmd); err == nil {
			t.Fatalf("%s: accepted", tt.name)
		} else {
			usecasetest.MustCode(t, err, tt.code)
		}
	}
	got, err := w.domains.Update(t.Context(), boss, d.ID(), hostdomain.UpdateDomain{VerifyReason: &reason})
	if err != nil || got.Status() != domain.DomainVerified || got.ManualReason() != reason {
		t.Fatalf("verify by hand: %+v, %v", got, err)
	}
	entries := w.Entries(t, "admin.update-domain")
	outcomes := map[domain.Outcome]int{}
	for _, e := range entries {
		outcomes[e.Outcome]++
	}
	if len(entries) != 6 || outcomes[domain.OutcomeDenied] != 1 || outcomes[domain.OutcomeSuccess] != 1 {
		t.Fatalf("audit outcomes = %v", outcomes)
	}
}

// Ensure a pass takes at most a batch of due domains, the most overdue
// first, and says when more may be due.
func TestDomains_CheckDue_batches(t *testing.T) {
	w := newDomainWorld(t, "")
	batched := hostdomain.NewDomains(w.repo, memory.NewOrganizationRepository(w.DB), w.dns, w.Auditor, system.NewTokenGenerator(),
		system.NewIDGenerator(), w.Clock, hostdomain.DomainSettings{Policy: domainPolicy, CheckBatch: 2}, usecase.AdminSettings{Admins: w.Admins})
	var created []domain.DomainID
	for _, h := range []string{"a.example.com", "b.example.com", "c.example.com"} {
		created = append(created, w.mustCreate(t, h).ID())
		w.Clock.Advance(time.Second)
	}
	first, err := batched.CheckDue(t.Context())
	if err != nil || first.Due != 2 || !first.More || len(first.Checks) != 2 || first.Checks[0].ID == created[2] || first.Checks[1].ID == created[2] {
		t.Fatalf("first pass = %+v, %v; want the two oldest and more", first, err)
	}
	second, err := batched.CheckDue(t.Context())
	if err != nil || second.Due != 1 || second.More || len(second.Checks) != 1 || second.Checks[0].ID != created[2] {
		t.Fatalf("second pass = %+v, %v; want the last one", second, err)
	}
}

// Ensure a platform administrator creates and deletes domains with the
// trusted API's rules, audited as admin.create-domain and
// admin.delete-domain, and anyone else is refused and recorded.
func TestDomains_CreateAsAdmin_DeleteAsAdmin(t *testing.T) {
	w := newDomainWorld(t, "")
	ctx := t.Context()
	boss := usecase.AdminRequest{Principal: w.SignedIn(t, "boss@example.com")}
	eve := usecase.AdminRequest{Principal: w.SignedIn(t, "eve@example.com")}

	if _, err := w.domains.CreateAsAdmin(ctx, eve, hostdomain.CreateDomain{Hostname: "shop.example.com"}); !errors.Is(err, domain.ErrNotPlatformAdmin) {
		t.Fatalf("non-admin create: %v", err)
	}
	_, err := w.domains.CreateAsAdmin(ctx, boss, hostdomain.CreateDomain{Hostname: "com"})
	mustDomainField(t, err, "domain.invalid_hostname", "hostname")
	d, err := w.domains.CreateAsAdmin(ctx, boss, hostdomain.CreateDomain{Hostname: "Shop.Example.com."})
	if err != nil || d.Hostname() != "shop.example.com" || d.Status() != domain.DomainPending {
		t.Fatalf("create: %+v, %v", d, err)
	}
	if err := w.domains.DeleteAsAdmin(ctx, eve, d.ID()); !errors.Is(err, domain.ErrNotPlatformAdmin) {
		t.Fatalf("non-admin delete: %v", err)
	}
	if err := w.domains.DeleteAsAdmin(ctx, boss, d.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := w.domains.Get(ctx, d.ID()); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("deleted domain: %v", err)
	}
	for action, want := range map[string][]domain.Outcome{
		"admin.create-domain": {domain.OutcomeDenied, domain.OutcomeFailure, domain.OutcomeSuccess},
		"admin.delete-domain": {domain.OutcomeDenied, domain.OutcomeSuccess},
	} {
		var got []domain.Outcome
		for _, e := range w.Entries(t, action) {
			got = append(got, e.Outcome)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s outcomes = %v, want %v", action, got, want)
		}
	}
}
