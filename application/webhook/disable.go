package webhook

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// senderActor is who the audit log says disabled a failing endpoint.
var senderActor = usecase.Actor{Type: domain.ActorSystem, ID: "webhook-sender"}

// errUnchanged ends an endpoint update that has nothing to write.
var errUnchanged = errors.New("webhook: nothing to write")

// bookkeep notes each endpoint's successes and failures of the pass, in
// the order they happened: a success ends a failing streak; a failure
// starts one, and disables the endpoint once it has lasted DisableAfter
// with no success. An endpoint is written only when that changes
// something. A disabled endpoint is audited (webhooks.disable, by the
// system) in the same unit of work, and the platform administrators get a
// mail.
func (s *Sender) bookkeep(ctx context.Context, byID map[domain.WebhookEndpointID]domain.WebhookEndpoint, outcomes []outcome, rep *SendReport) error {
	per := map[domain.WebhookEndpointID][]outcome{}
	for _, o := range outcomes {
		if o.attempted() {
			per[o.endpoint] = append(per[o.endpoint], o)
		}
	}
	var firstErr error
	for id, os := range per {
		slices.SortFunc(os, func(a, b outcome) int { return cmp.Compare(a.at.UnixNano(), b.at.UnixNano()) })
		if e := byID[id]; !s.note(&e, os) {
			continue // nothing would change: no write
		}
		var disabled *domain.WebhookEndpoint
		err := s.uow.Do(ctx, func(ctx context.Context) error {
			err := s.endpoints.Update(ctx, id, func(e *domain.WebhookEndpoint) error {
				wasEnabled := e.Enabled
				if !s.note(e, os) {
					return errUnchanged
				}
				if wasEnabled && !e.Enabled {
					d := *e
					disabled = &d
				}
				return nil
			})
			if err != nil || disabled == nil {
				return err
			}
			return s.audit.Succeeded(ctx, senderActor, "webhooks.disable", usecase.Target{Type: "webhook", ID: string(id)})
		})
		if errors.Is(err, errUnchanged) || domain.KindOf(err) == domain.KindNotFound {
			continue
		}
		if err != nil {
			firstErr = cmp.Or(firstErr, err)
			continue
		}
		if disabled != nil {
			rep.Disabled = append(rep.Disabled, *disabled)
			rep.MailErrors = append(rep.MailErrors, s.mailAdmins(ctx, *disabled)...)
		}
	}
	return firstErr
}

// note applies outcomes to e and reports whether anything changed.
func (s *Sender) note(e *domain.WebhookEndpoint, os []outcome) bool {
	changed := false
	for _, o := range os {
		if o.result == "succeeded" {
			changed = e.RecordSuccess(o.at) || changed
			continue
		}
		c, _ := e.RecordFailure(o.at, s.settings.DisableAfter)
		changed = c || changed
	}
	return changed
}

// maxAdminMails bounds the mails one disabled endpoint sends.
const maxAdminMails = 100

// mailAdmins tells the platform administrators that e was disabled: the
// configured addresses, the configured users and the users with the admin
// role, each once, if their address is verified (a configured address is
// trusted as configured).
func (s *Sender) mailAdmins(ctx context.Context, e domain.WebhookEndpoint) []error {
	to := map[domain.Email]string{}
	for _, a := range s.admins.Emails {
		to[a] = ""
	}
	add := func(u *domain.User) {
		if u.EmailVerified() && !u.IsBanned(s.clock.Now()) && len(to) < maxAdminMails {
			to[u.Email()] = u.Name()
		}
	}
	for _, id := range s.admins.UserIDs {
		if u, err := s.users.Get(ctx, id); err == nil {
			add(u)
		}
	}
	admins, _, err := s.users.List(ctx, ports.UserQuery{Conditions: []ports.UserCondition{
		{Field: ports.UserFieldRole, Operator: ports.OpEq, Value: string(domain.PlatformRoleAdmin)}}, Limit: maxAdminMails})
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for _, u := range admins {
		add(u)
	}
	for addr, name := range to {
		m := domain.Mail{Kind: domain.MailWebhookDisabled, To: addr, Name: name, WebhookID: string(e.ID), WebhookURL: e.URL}
		if err := s.mailer.Send(ctx, m); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
