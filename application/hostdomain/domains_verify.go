package hostdomain

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// DefaultCheckBatch is how many due domains one verifier pass checks when
// DomainSettings.CheckBatch is zero.
const DefaultCheckBatch = 100

// DefaultCheckLease is how long a pass's claim on its domains lasts when
// DomainSettings.CheckLease is zero: far longer than a pass of slow zones
// takes, and short enough that the domains of a verifier that died are
// checked again soon after.
const DefaultCheckLease = 5 * time.Minute

// checkConcurrency bounds the DNS lookups one pass runs at once, so a pass
// of slow (timing out) zones still ends in a few lookup timeouts.
const checkConcurrency = 16

// DomainCheck is the outcome of one domain's check.
type DomainCheck struct {
	ID       domain.DomainID
	Hostname string
	From, To domain.DomainStatus
	// LookupErr is the DNS failure (SERVFAIL, timeout…) that made the check
	// inconclusive: the status stood and the check was rescheduled.
	LookupErr error
}

// Changed reports whether the check changed the domain's status.
func (c DomainCheck) Changed() bool { return c.From != c.To }

// CheckReport is what one verifier pass did.
type CheckReport struct {
	// Due is how many due domains the pass took, at most the batch size.
	Due int
	// More reports whether the pass took a full batch, so more may be due.
	More bool
	// Checks are the domains checked; a domain that changed meanwhile
	// (deleted, a check requested, or claimed again after the lease ran
	// out) is not among them.
	Checks []DomainCheck
}

// errClaimLost ends an update whose domain changed since it was claimed.
var errClaimLost = errors.New("domain changed since claimed")

// CheckDue runs one verifier pass: it claims the domains whose check is
// due, the most overdue first, for the check lease, looks up their records (the TXT challenge, and the
// CNAME at the hostname when one is required) and applies what it saw with
// the verification policy, each domain in its own atomic update. A lookup
// that fails (SERVFAIL, refusal, timeout) proves nothing: the status and
// the records stand and the check is retried later, with backoff. Several
// verifiers may run at once, in this process or others: the claim gives
// each due domain to one of them, so each is looked up once per pass, and
// a domain whose verifier died is claimed again when the lease ends.
func (s *Domains) CheckDue(ctx context.Context) (CheckReport, error) {
	batch := s.settings.CheckBatch
	if batch <= 0 {
		batch = DefaultCheckBatch
	}
	lease := s.settings.CheckLease
	if lease <= 0 {
		lease = DefaultCheckLease
	}
	due, err := s.domains.ClaimDue(ctx, s.clock.Now(), lease, batch)
	if err != nil {
		return CheckReport{}, err
	}
	checks := make([]*DomainCheck, len(due))
	errs := make([]error, len(due))
	sem := make(chan struct{}, checkConcurrency)
	var wg sync.WaitGroup
	for i, d := range due {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			checks[i], errs[i] = s.check(ctx, d)
		})
	}
	wg.Wait()
	report := CheckReport{Due: len(due), More: len(due) == batch}
	for _, c := range checks {
		if c != nil {
			report.Checks = append(report.Checks, *c)
		}
	}
	return report, errors.Join(errs...)
}

// check looks up d's records and applies the observation, or the failure
// to observe, to the stored domain. It returns nil when there was nothing
// to apply (checked elsewhere, deleted).
func (s *Domains) check(ctx context.Context, d *domain.Domain) (*DomainCheck, error) {
	obs, lookupErr := s.observe(ctx, d)
	if ctx.Err() != nil {
		return nil, nil // stopping: the domain is due again when the claim ends
	}
	c := &DomainCheck{ID: d.ID(), Hostname: d.Hostname(), LookupErr: lookupErr}
	// A check that verifies or fails the domain writes domain.verified or
	// domain.failed with it.
	err := s.audit.Events().Do(ctx, func(ctx context.Context, emit usecase.Emit) error {
		var checked *domain.Domain
		err := s.domains.Update(ctx, d.ID(), func(cur *domain.Domain) error {
			// Changed since the claim: an administrator verified it or
			// asked for a recheck, or the lease ran out and another
			// verifier took it.
			if next := cur.NextCheckAt(); next.IsZero() || !next.Equal(d.NextCheckAt()) {
				return errClaimLost
			}
			now := s.clock.Now()
			c.From = cur.Status()
			if lookupErr != nil {
				cur.PostponeCheck(now, s.settings.Policy)
			} else {
				cur.Observe(obs, now, s.settings.Policy)
			}
			c.To = cur.Status()
			checked = cur
			return nil
		})
		if err != nil {
			return err
		}
		emitStatus(emit, c.From, checked)
		return s.covered(ctx, c.From, checked, false)
	})
	if errors.Is(err, errClaimLost) || errors.Is(err, domain.ErrDomainNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// observe looks up every record of d. Any failed lookup makes the whole
// observation inconclusive.
func (s *Domains) observe(ctx context.Context, d *domain.Domain) ([]domain.Observation, error) {
	var obs []domain.Observation
	for _, r := range d.Records() {
		o := domain.Observation{Type: r.Type, Name: r.Name}
		switch r.Type {
		case domain.RecordTXT:
			vs, err := s.resolver.LookupTXT(ctx, r.Name)
			if err != nil {
				return nil, err
			}
			o.Values = vs
		case domain.RecordCNAME:
			target, err := s.resolver.LookupCNAME(ctx, r.Name)
			if err != nil {
				return nil, err
			}
			if target != "" {
				o.Values = []string{target}
			}
		}
		obs = append(obs, o)
	}
	return obs, nil
}
