package edge

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/domain"
)

// Rate limits. Each route declares its rule with its policy where it is
// registered (Policy.Rate, WithRate); the middleware looks the rule up by
// the request's method and matched route template, so a key names a rule and
// a client, never a raw path, and the number of keys follows the number of
// clients. The rules themselves are in internal/

// ginPath turns a contract path ({id}) into the template gin reports (:id).
func ginPath(path string) string {
	out := make([]byte, 0, len(path))
	for i := 0; i < len(path); i++ {
		switch path[i] {
		case '{':
			out = append(out, ':')
		case '}':
		default:
			out = append(out, path[i])
		}
	}
	return string(out)
}

// Handle registers a plain gin route (outside the contracts) with its policy.
func (s *Kit) Handle(method, path string, p Policy, h gin.HandlerFunc) {
	s.policies.Set(method, path, p)
	s.engine.Handle(method, path, h)
}

// CheckPolicies panics unless every route declared a complete policy, so a
// route added without one fails at start-up rather than going unguarded.
func (s *Kit) CheckPolicies() {
	served := s.engine.Routes()
	infos := make([]RouteInfo, len(served))
	for i, r := range served {
		infos[i] = RouteInfo{Method: r.Method, Path: r.Path}
	}
	s.policies.Check(infos)
}

// RateLimiter counts each request against its route's rule before the
// handler runs, keyed by the rule and the client address (IPv6 by its /64).
// Trusted routes are counted per service key by Server.serviceKey instead.
func (s *Kit) RateLimiter() gin.HandlerFunc {
	return func(c *gin.Context) {
		if !s.Config.RateLimit {
			c.Next()
			return
		}
		rule := PolicyFrom(c.Request.Context()).Rate
		name := rule.Name
		if rule.PerRoute {
			name += ":" + c.FullPath()
		}
		if rule.Limit == 0 || rule.ByServiceKey {
			c.Next()
			return
		}
		if err := s.throttle(c.Request.Context(), name+"|"+clientKey(c.ClientIP()), rule); err != nil {
			s.AbortWithError(c, err)
			return
		}
		c.Next()
	}
}

// throttle counts one request for key under rule's limit, or returns a
// RateLimited error, counting the refusal under the rule's name.
func (s *Kit) throttle(ctx context.Context, key string, r Rate) error {
	err := s.deps.Throttle.Throttle(ctx, account.Throttle{Key: key, Limit: r.Limit, Window: r.Window})
	if err != nil && s.Config.Observer != nil {
		s.Config.Observer.RateLimited(r.Name)
	}
	return err
}

// ThrottleServiceKey counts a trusted request against its key's budget
// (Config.ServiceKeyLimit per ServiceKeyWindow), whatever address it comes
// from: backends behind one outbound address each have their own budget.
func (s *Kit) ThrottleServiceKey(ctx context.Context, id domain.ServiceKeyID) error {
	if !s.Config.RateLimit {
		return nil
	}
	r := Rate{Name: RateServiceKey.Name, Limit: s.Config.ServiceKeyLimit, Window: s.Config.ServiceKeyWindow}
	return s.throttle(ctx, r.Name+"|"+string(id), r)
}

// ThrottleRefusedKey counts a request whose service key was refused against
// its address, so nobody can send unlimited guesses.
func (s *Kit) ThrottleRefusedKey(ctx context.Context) error {
	if !s.Config.RateLimit {
		return nil
	}
	key := RateRefusedKey.Name + "|" + clientKey(RequestInfoFrom(ctx).ClientIP)
	return s.throttle(ctx, key, RateRefusedKey)
}
