package admin

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Dashboard shows platform administrators the state of the service
// at a glance: how many users, organizations, domains and active sessions
// there are, how sign-ins went lately, and the latest audit entries.
type Dashboard struct {
	users    ports.UserRepository
	orgs     ports.OrganizationRepository
	domains  ports.DomainRepository
	sessions ports.SessionRepository
	signIns  ports.SignInStats
	log      ports.AuditLog
	clock    ports.Clock
	admins   domain.PlatformAdmins
	flusher  Flusher // nil: nothing gathered in memory
}

// NewDashboard returns a Dashboard.
func NewDashboard(users ports.UserRepository, orgs ports.OrganizationRepository, domains ports.DomainRepository,
	sessions ports.SessionRepository, signIns ports.SignInStats, log ports.AuditLog, clock ports.Clock, admins domain.PlatformAdmins) *Dashboard {
	usecase.MustHave(users, orgs, domains, sessions, signIns, log, clock)
	return &Dashboard{users: users, orgs: orgs, domains: domains, sessions: sessions, signIns: signIns, log: log, clock: clock, admins: admins}
}

// Flusher writes what a process gathered in memory to the store before a
// read: usecase.SignInCounter's sign-in counts.
type Flusher interface {
	Flush(ctx context.Context) error
}

// FlushFirst has Overview write f's counts before reading the sign-ins, so
// the overview counts this process's last seconds too (other replicas'
// within their flush interval). It returns h.
func (h *Dashboard) FlushFirst(f Flusher) *Dashboard {
	h.flusher = f
	return h
}

// The overview's windows: the hours of the last day, the days of the last
// month, each ending with the current one, and how many audit entries.
const (
	OverviewHours        = 24
	OverviewDays         = 30
	OverviewAuditEntries = 10
)

// DomainStatuses are the domain statuses the overview counts, in the order
// it shows them.
var DomainStatuses = []domain.DomainStatus{domain.DomainPending, domain.DomainVerified, domain.DomainFailed}

// Overview is what Dashboard shows.
type Overview struct {
	// At is when the overview was read.
	At            time.Time
	Users         int
	Organizations int
	// Domains counts the domains in each of DomainStatuses (zero
	// included).
	Domains map[domain.DomainStatus]int
	// ActiveSessions counts the sessions not expired at At.
	ActiveSessions int
	// Hourly holds OverviewHours hourly buckets of sign-ins, oldest first,
	// the last one the current hour (so far); Daily OverviewDays days
	// (UTC), the last one today.
	Hourly []ports.SignInBucket
	Daily  []ports.SignInBucket
	// RecentAudit holds the latest OverviewAuditEntries audit entries,
	// newest first.
	RecentAudit []domain.AuditEntry
}

// Overview returns the overview to a platform administrator. Each count is
// one statement; the sign-ins are one read of the hour buckets of the last
// 30 days (at most 720 hours) through their primary key, and the audit
// entries the newest of the log through its time index.
func (h *Dashboard) Overview(ctx context.Context, u *domain.User) (*Overview, error) {
	if !h.admins.IsAdmin(u) {
		return nil, domain.ErrNotPlatformAdmin
	}
	now := h.clock.Now().UTC()
	o := &Overview{At: now, Domains: make(map[domain.DomainStatus]int, len(DomainStatuses))}
	var err error
	if o.Users, err = h.users.Count(ctx); err != nil {
		return nil, err
	}
	if o.Organizations, err = h.orgs.Count(ctx); err != nil {
		return nil, err
	}
	byStatus, err := h.domains.CountByStatus(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range DomainStatuses {
		o.Domains[s] = byStatus[s]
	}
	if o.ActiveSessions, err = h.sessions.CountActive(ctx, now); err != nil {
		return nil, err
	}
	if o.Hourly, o.Daily, err = h.series(ctx, now); err != nil {
		return nil, err
	}
	if o.RecentAudit, err = h.log.List(ctx, ports.AuditQuery{Limit: OverviewAuditEntries}); err != nil {
		return nil, err
	}
	return o, nil
}

// series reads the hours from the first of the OverviewDays days to now
// once, and returns the last OverviewHours of them and their sums by day.
func (h *Dashboard) series(ctx context.Context, now time.Time) (hourly, daily []ports.SignInBucket, err error) {
	first := now.Truncate(ports.StepDay).Add(-(OverviewDays - 1) * ports.StepDay)
	if h.flusher != nil {
		// A count that cannot be written now stays gathered for the next
		// flush; the overview shows what the store holds.
		_ = h.flusher.Flush(ctx)
	}
	hours, err := h.signIns.Series(ctx, first, now.Truncate(ports.StepHour).Add(ports.StepHour), ports.StepHour)
	if err != nil {
		return nil, nil, err
	}
	daily = make([]ports.SignInBucket, OverviewDays)
	for i := range daily {
		daily[i].Start = first.Add(time.Duration(i) * ports.StepDay)
	}
	const perDay = int(ports.StepDay / ports.StepHour)
	for i, b := range hours {
		d := &daily[i/perDay]
		d.Succeeded += b.Succeeded
		d.Failed += b.Failed
	}
	return hours[len(hours)-OverviewHours:], daily, nil
}
