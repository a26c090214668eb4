package edge

import (
	"context"
	"net/http"

	"github.com/gatehouse/gatehouse/application/usecase"
)

// Impersonation is what a route lets a session an administrator
// impersonates (domain.Session.ImpersonatedBy) do, declared once in its
// policy (Policy.WhileImpersonating) and enforced where the route finds its
// caller (Kit.Principal, and the console's gate): an impersonation is for
// seeing what the user sees, not for acting as them. A refusal is 403
// admin.impersonation_read_only, recorded in the audit log with both the
// user and the administrator, and changes nothing.
type Impersonation int

const (
	// ImpersonationReadOnly, every route's default: reads (GET, HEAD) go
	// through; any other request is refused. It keeps every credential,
	// address, profile, factor, session, linking, deletion, organization
	// and consent change from an impersonation, on every contract and form.
	ImpersonationReadOnly Impersonation = iota
	// ImpersonationAllowed lets every request of the route through: ending
	// the impersonation (sign-out, stop-impersonating, the OpenID
	// end-session), choosing the active organization, and the POST routes
	// that only answer a question (check-slug, has-permission).
	ImpersonationAllowed
	// ImpersonationRefused lets nothing through, not even a GET: for GETs
	// that act (delete-user/callback, starting a passkey registration,
	// authorize: signing in to a relying party as the user).
	ImpersonationRefused
)

// allows reports whether an impersonation session may make a request with
// method to a route that declares i.
func (i Impersonation) allows(method string) bool {
	switch i {
	case ImpersonationAllowed:
		return true
	case ImpersonationRefused:
		return false
	}
	return method == http.MethodGet || method == http.MethodHead
}

// AllowedWhileImpersonating declares that a route's every request is open
// to an impersonation session (ImpersonationAllowed).
func AllowedWhileImpersonating(p *Policy) { p.WhileImpersonating = ImpersonationAllowed }

// RefusedWhileImpersonating declares that a route refuses an impersonation
// session even its GET requests (ImpersonationRefused).
func RefusedWhileImpersonating(p *Policy) { p.WhileImpersonating = ImpersonationRefused }

// CheckImpersonation refuses the request of ctx, made with the session of p,
// when p is an impersonation and the route's policy keeps the request from
// one (Policy.WhileImpersonating): 403 admin.impersonation_read_only, with
// an audit entry ("impersonation.refused", the target the request's method
// and path) naming the user and the administrator. It notes the
// impersonation in ctx, so that whatever the request goes on to record or
// emit names both too.
func (s *Kit) CheckImpersonation(ctx context.Context, p usecase.Principal) error {
	if p.Session == nil || p.Session.ImpersonatedBy() == "" {
		return nil
	}
	usecase.NoteImpersonation(ctx, p.Session)
	r := RequestInfoFrom(ctx).Request
	if PolicyFrom(ctx).WhileImpersonating.allows(r.Method) {
		return nil
	}
	route := r.Method
	if r.URL != nil {
		route += " " + r.URL.Path
	}
	return s.deps.Admins.RefuseImpersonation(ctx, p, route, Origin(ctx))
}

// ImpersonationNote ends the description of every route an impersonation
// session may not use, in the vocabulary of its contract (code).
func ImpersonationNote(code string) string {
	return " While an administrator impersonates the user, this route answers 403 " + code +
		" and changes nothing: an impersonation may read, sign out and stop impersonating, not act as the user."
}
