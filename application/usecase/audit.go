package usecase

import (
	"context"
	"errors"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Actor is who performs an audited action and where the request came from.
type Actor struct {
	Type domain.ActorType
	// ID is the user id, the service-key id, or "" for the command line.
	ID        string
	RequestID string
	IPAddress string
}

// UserActor returns the actor for a signed-in user's request.
func UserActor(u domain.UserID, requestID, ip string) Actor {
	return Actor{Type: domain.ActorUser, ID: string(u), RequestID: requestID, IPAddress: ip}
}

// Origin is where a request came from, for the audit log: the edge's
// request id and the client's address. A signed-in user's own changes to
// their account (two-factor, passkeys) carry it in their commands and are
// recorded with ChangeSelf and RecordSelf.
type Origin struct {
	RequestID string
	IPAddress string
}

// CLIActor is the command line on the server.
var CLIActor = Actor{Type: domain.ActorCLI, ID: "cli"}

// Auditor appends to the audit log. A change it runs (Change) is written
// with its success entry and its events in one unit of work; a refusal or
// a failure is written on its own (Record).
type Auditor struct {
	log    ports.AuditLog
	events *Events
	ids    ports.IDGenerator
	clock  ports.Clock
}

// Target names what an action was done to.
type Target struct {
	Type string
	ID   string
}

// Record appends the outcome of action by actor on t, which ended with err,
// and returns err. If the entry cannot be written the action's own error
// still wins; when the action succeeded, the failure to record it is
// returned, so nothing administrative succeeds silently unaudited. Use it
// for outcomes that changed nothing (refusals, reads); a change goes
// through Change.
func (a Auditor) Record(ctx context.Context, actor Actor, action string, t Target, err error) error {
	// The entry is written even when the request's context was cancelled
	// after the action took effect.
	if aerr := a.append(context.WithoutCancel(ctx), actor, action, t, err); aerr != nil && err == nil {
		return aerr
	}
	return err
}

// append writes the entry of action by actor on t, which ended with err.
func (a Auditor) append(ctx context.Context, actor Actor, action string, t Target, err error) error {
	e := domain.AuditEntry{
		ID: a.ids.NewID(), OccurredAt: a.clock.Now(),
		ActorType: actor.Type, ActorID: actor.ID, Action: action, TargetType: t.Type, TargetID: t.ID,
		RequestID: actor.RequestID, IPAddress: actor.IPAddress, Outcome: domain.OutcomeOf(err),
	}
	// An action that came through an impersonation session names the
	// administrator behind it too, whichever use case records it.
	if imp, ok := ImpersonationFrom(ctx); ok {
		e.ImpersonatorID = string(imp.Admin)
	}
	if e.Outcome != domain.OutcomeSuccess {
		var de *domain.Error
		if errors.As(err, &de) {
			e.Code = de.Code
		}
	}
	if aerr := a.log.Append(ctx, e); aerr != nil {
		return domain.Internal("audit: append", aerr)
	}
	return nil
}

// Change runs change, the action of actor on *t, in one unit of work with
// its success entry and the events it emits: the change, the entry and the
// events are kept together or not at all. change may fill in t (a created
// thing's id) before it returns. When change fails, or the entry or an
// event cannot be written, nothing of it is kept and the failure (or
// refusal) is recorded on its own, as Record does; its error is returned.
func (a Auditor) Change(ctx context.Context, actor Actor, action string, t *Target, change func(ctx context.Context, emit Emit) error) error {
	err := a.events.Do(ctx, func(ctx context.Context, emit Emit) error {
		if err := change(ctx, emit); err != nil {
			return err
		}
		return a.append(ctx, actor, action, *t, nil)
	})
	if err != nil {
		return a.Record(ctx, actor, action, *t, err)
	}
	return nil
}

// Succeeded appends the success entry of action by actor on t within the
// unit of work of ctx, for a change run in Events.Do whose refusals are not
// all worth an entry (a lost race retried another way, say).
func (a Auditor) Succeeded(ctx context.Context, actor Actor, action string, t Target) error {
	return a.append(ctx, actor, action, t, nil)
}

// ChangeSelf is Change for the signed-in user's change to their own
// account, from o (the target is the user), as RecordSelf records.
func (a Auditor) ChangeSelf(ctx context.Context, user domain.UserID, o Origin, action string, change func(ctx context.Context, emit Emit) error) error {
	return a.Change(ctx, UserActor(user, o.RequestID, o.IPAddress), action, &Target{Type: "user", ID: string(user)}, change)
}

// Events returns the events writer of the auditor's changes, for the
// changes a use case makes without an audit entry.
func (a Auditor) Events() *Events { return a.events }

// RecordSelf records the outcome of action by the signed-in user on their
// own account, from o, which ended with err, and returns err as Record does
// (the target is the user). Use it for refusals of a user's changes to
// their own factors: "two-factor.enable", "passkey.register"…
func (a Auditor) RecordSelf(ctx context.Context, user domain.UserID, o Origin, action string, err error) error {
	return a.Record(ctx, UserActor(user, o.RequestID, o.IPAddress), action, Target{Type: "user", ID: string(user)}, err)
}

// Caller is who asks for a use case and from where: a signed-in user
// (AdminRequest, OrgRequest) or a trusted backend's service key
// (TrustedRequest). Each use case decides what its caller may do: a user
// needs the admin permission or the membership role it always needed, a
// service key the scope of the operation.
type Caller interface {
	// Actor is the audit log's view of the caller.
	Actor() Actor
	caller()
}

func (AdminRequest) caller()   {}
func (OrgRequest) caller()     {}
func (TrustedRequest) caller() {}

// TrustedRequest is a request of a trusted backend, authenticated by its
// service key. The use case checks the key's scope for the operation.
type TrustedRequest struct {
	Key       *domain.ServiceKey
	RequestID string
	IPAddress string
}

// Actor returns the service key as the audited actor.
func (r TrustedRequest) Actor() Actor {
	return Actor{Type: domain.ActorServiceKey, ID: string(r.Key.ID()), RequestID: r.RequestID, IPAddress: r.IPAddress}
}

// Need refuses a key without scope ("" names an operation no key may
// perform).
func (r TrustedRequest) Need(scope domain.Scope) error {
	if r.Key == nil || scope == "" || !r.Key.HasScope(scope) {
		return domain.NewError(domain.KindForbidden, "auth.insufficient_scope", "The service key lacks the scope "+string(scope))
	}
	return nil
}

// ActionOf names an audited action as the caller's log has always named it:
// the admin plugin's name for a signed-in user, the trusted API's for a
// service key.
func ActionOf(req Caller, user, key string) string {
	if _, ok := req.(TrustedRequest); ok {
		return key
	}
	return user
}

// IsSelf reports whether req is the signed-in user id.
func IsSelf(req Caller, id domain.UserID) bool {
	r, ok := req.(AdminRequest)
	return ok && r.Principal.User != nil && r.Principal.User.ID() == id
}

// NewAuditor records to log, naming entries with ids and dating them by
// clock; its changes write their events through events.
func NewAuditor(log ports.AuditLog, events *Events, ids ports.IDGenerator, clock ports.Clock) Auditor {
	MustHave(log, ids, clock)
	if events == nil {
		panic("usecase: nil events")
	}
	return Auditor{log: log, events: events, ids: ids, clock: clock}
}
