package admin

import (
	"context"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// ErrImpersonationReadOnly refuses a request an impersonation session may
// not make: the edge's route policy decides which (reads, signing out and
// stopping are allowed; no change to the user's account is).
var ErrImpersonationReadOnly = domain.NewError(domain.KindForbidden, "admin.impersonation_read_only",
	"You are impersonating this user: you may look, sign out and stop impersonating, but not act as them")

// RefuseImpersonation records that p, an impersonation session, was
// refused route (its method and path), from o, and returns
// ErrImpersonationReadOnly. The entry's actor is the user and its
// impersonator the administrator; its target is the route.
func (a *Administration) RefuseImpersonation(ctx context.Context, p usecase.Principal, route string, o usecase.Origin) error {
	actor := usecase.UserActor(p.Session.UserID(), o.RequestID, o.IPAddress)
	// The entry names the administrator even when ctx has no room for the
	// impersonation (usecase.WithImpersonationSlot).
	ctx = usecase.WithImpersonationSlot(ctx)
	usecase.NoteImpersonation(ctx, p.Session)
	return a.audit.Record(ctx, actor, "impersonation.refused", usecase.Target{Type: "route", ID: route}, ErrImpersonationReadOnly)
}
