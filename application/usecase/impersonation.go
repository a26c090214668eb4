package usecase

import (
	"context"
	"sync"

	"github.com/gatehouse/gatehouse/domain"
)

// Impersonation is an administrator acting through a session of another
// user (domain.Session.ImpersonatedBy): the pair the audit log and the
// webhooks name for everything done through it.
type Impersonation struct {
	// User is the impersonated user, whose session it is.
	User domain.UserID
	// Admin is the administrator impersonating them.
	Admin domain.UserID
}

// impersonationSlot holds, for one request, the impersonation its session
// turned out to be once the edge resolved it.
type impersonationSlot struct {
	mu  sync.Mutex
	imp Impersonation
}

type impersonationKey struct{}

// WithImpersonationSlot returns ctx with room for the impersonation of its
// request (NoteImpersonation), for a request whose session is read only
// later, by its handler. The edge gives every request one.
func WithImpersonationSlot(ctx context.Context) context.Context {
	if _, ok := ctx.Value(impersonationKey{}).(*impersonationSlot); ok {
		return ctx
	}
	return context.WithValue(ctx, impersonationKey{}, &impersonationSlot{})
}

// NoteImpersonation records in ctx's slot (WithImpersonationSlot) that the
// request acts through the session s; a session nobody impersonates, or a
// ctx without a slot, records nothing. Every audit entry and event written
// with ctx afterwards names both the user and the administrator.
func NoteImpersonation(ctx context.Context, s *domain.Session) {
	if s == nil || s.ImpersonatedBy() == "" {
		return
	}
	if slot, ok := ctx.Value(impersonationKey{}).(*impersonationSlot); ok {
		slot.mu.Lock()
		slot.imp = Impersonation{User: s.UserID(), Admin: s.ImpersonatedBy()}
		slot.mu.Unlock()
	}
}

// ImpersonationFrom returns the impersonation the request of ctx acts
// through, and whether it is one.
func ImpersonationFrom(ctx context.Context) (Impersonation, bool) {
	slot, ok := ctx.Value(impersonationKey{}).(*impersonationSlot)
	if !ok {
		return Impersonation{}, false
	}
	slot.mu.Lock()
	defer slot.mu.Unlock()
	return slot.imp, slot.imp.Admin != ""
}
