package edge

import (
	"context"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// Deps is what the edge itself asks of the application, named when the Kit
// is built (NewKit): finding a request's caller and counting its requests.
// The contract packages hold the use cases their handlers call themselves.
type Deps struct {
	// Sessions resolves a session token (account.Sessions).
	Sessions SessionAuthenticator
	// ServiceKeys authenticates a service key's secret
	// (servicekey.ServiceKeys).
	ServiceKeys KeyAuthenticator
	// Admins decides what a platform administrator's session, or an
	// impersonation, may do on a route (admin.Administration).
	Admins AdminGate
	// Throttle counts requests against the rate limits
	// (account.SignIns).
	Throttle Throttler
	// SessionLifetime is how long a remembered session's cookie lives.
	SessionLifetime time.Duration
}

// SessionAuthenticator resolves a session token to its session.
type SessionAuthenticator interface {
	// Authenticate returns the live session of cmd.Token, or an
	// Unauthenticated error.
	Authenticate(ctx context.Context, cmd account.Authenticate) (*account.AuthenticateResult, error)
	// Refresh pushes the expiry of res's remembered session forward when
	// it is due (get-session), setting res.Refreshed.
	Refresh(ctx context.Context, res *account.AuthenticateResult) error
}

// KeyAuthenticator authenticates a service key's secret.
type KeyAuthenticator interface {
	// Authenticate returns the live key of secret, or an Unauthenticated
	// error.
	Authenticate(ctx context.Context, secret string) (*domain.ServiceKey, error)
}

// AdminGate is what a route's policy asks of an administrator's or an
// impersonation's session.
type AdminGate interface {
	// RequireSecondFactor refuses a platform administrator without a second
	// factor while the configuration requires one (403 admin.mfa_required).
	RequireSecondFactor(ctx context.Context, p usecase.Principal) error
	// RefuseImpersonation refuses p's impersonation the route, and audits it.
	RefuseImpersonation(ctx context.Context, p usecase.Principal, route string, o usecase.Origin) error
}

// Throttler counts one request against a limit, or refuses it (429).
type Throttler interface {
	Throttle(ctx context.Context, cmd account.Throttle) error
}

// caller is the request's caller, resolved at most once per request and
// only when a handler asks (Kit.Session, Kit.Principal, Kit.ServiceKey):
// a route that never asks pays no query.
type caller struct {
	session   sync.Once
	sess      Session
	sessErr   error
	principal sync.Once
	p         usecase.Principal
	pErr      error
	key       sync.Once
	k         *domain.ServiceKey
	kErr      error
}

type callerKey struct{}

// Callers puts the room for the request's caller in its context: the
// session (from the session cookie or Authorization: Bearer), the principal
// the route's policy admits (impersonation, an administrator's second
// factor) and the service key, each resolved the first time a handler asks
// and then kept for the rest of the request.
func (s *Kit) Callers() gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), callerKey{}, &caller{}))
		c.Next()
	}
}

// callerOf is ctx's caller; a context the middleware did not see (a test
// calling a handler) gets a fresh one, so nothing is kept.
func callerOf(ctx context.Context) *caller {
	if c, ok := ctx.Value(callerKey{}).(*caller); ok {
		return c
	}
	return &caller{}
}

// Session is the session a request carries.
type Session struct {
	// Token is the session token from the session cookie (when its
	// signature holds) or Authorization: Bearer; "" when there is none.
	Token string
	// HadCookie reports whether a session cookie was sent at all, so that
	// a stale or forged one can be cleared.
	HadCookie bool
	// Auth is the live session and its user; nil unless it resolved.
	Auth *account.AuthenticateResult
}

// Session resolves the request's session once per request, with no check
// of the route's policy: an Unauthenticated error without a live session
// (no query at all without a token). Most handlers want Principal.
func (s *Kit) Session(ctx context.Context) (Session, error) {
	c := callerOf(ctx)
	c.session.Do(func() {
		c.sess.Token, c.sess.HadCookie = s.Cookies.Token(RequestInfoFrom(ctx).Request)
		if c.sess.Token == "" {
			c.sessErr = usecase.ErrUnauthorized
			return
		}
		c.sess.Auth, c.sessErr = s.deps.Sessions.Authenticate(ctx, account.Authenticate{Token: c.sess.Token})
	})
	return c.sess, c.sessErr
}

// RefreshSession pushes the expiry of the request's remembered session
// forward when it is due (only get-session does, as in Better Auth).
func (s *Kit) RefreshSession(ctx context.Context, auth *account.AuthenticateResult) error {
	return s.deps.Sessions.Refresh(ctx, auth)
}

// Principal is the request's signed-in caller, resolved once per request,
// or 401 UNAUTHORIZED. It refuses an impersonation session the request the
// route's policy keeps from one (Policy.WhileImpersonating: 403
// admin.impersonation_read_only). On a route that administers the platform
// (Policy.Administers) it also refuses a platform administrator without a
// second factor while the configuration requires one (403
// admin.mfa_required): declared once in the route's policy, checked here
// where every such route finds its caller.
func (s *Kit) Principal(ctx context.Context) (usecase.Principal, error) {
	c := callerOf(ctx)
	c.principal.Do(func() { c.p, c.pErr = s.principalOf(ctx) })
	return c.p, c.pErr
}

func (s *Kit) principalOf(ctx context.Context) (usecase.Principal, error) {
	sess, err := s.Session(ctx)
	if err != nil {
		return usecase.Principal{}, err
	}
	p := sess.Auth.Principal
	if err := s.CheckImpersonation(ctx, p); err != nil {
		return usecase.Principal{}, err
	}
	if PolicyFrom(ctx).Administers {
		if err := s.deps.Admins.RequireSecondFactor(ctx, p); err != nil {
			return usecase.Principal{}, err
		}
	}
	return p, nil
}

// authenticateKey authenticates the service key secret once per request.
func (s *Kit) authenticateKey(ctx context.Context, secret string) (*domain.ServiceKey, error) {
	c := callerOf(ctx)
	c.key.Do(func() { c.k, c.kErr = s.deps.ServiceKeys.Authenticate(ctx, secret) })
	return c.k, c.kErr
}
