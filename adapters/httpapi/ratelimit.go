package httpapi

import (
	"context"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/application/command"
	"github.com/gatehouse/gatehouse/domain"
)

// Rate limits. Each route declares its rule where it is registered (see
// withRate and routeRate); the middleware looks the rule up by the request's
// method and matched route template, so a key names a rule and a client,
// never a raw path, and the number of keys follows the number of clients.

// rateRule is a route's limit: at most limit requests per window. A rule
// without a limit is never counted. perRoute rules count each route
// template on its own (Better Auth keys on the path); other rules share one
// budget over every route that declares them.
type rateRule struct {
	name     string
	limit    int
	window   time.Duration
	perRoute bool
	// byServiceKey rules are counted per service key once the key is
	// authenticated (see Server.serviceKey), not per address.
	byServiceKey bool
}

// The rules. Better Auth's defaults (better-auth-wire §4) for the framework,
// and Gatehouse's own for the rest.
var (
	// rateNone is for liveness and readiness: orchestrators poll them, and a
	// limit would turn a healthy process unhealthy.
	rateNone = rateRule{name: "none"}
	// rateCredentials is for sign-in, sign-up and credential changes.
	rateCredentials = rateRule{name: "credentials", limit: 3, window: 10 * time.Second, perRoute: true}
	// rateMail is for the routes that send mail.
	rateMail = rateRule{name: "mail", limit: 3, window: 60 * time.Second, perRoute: true}
	// rateOAuthToken is the OAuth token endpoint's.
	rateOAuthToken = rateRule{name: "oauth-token", limit: 30, window: 10 * time.Second, perRoute: true}
	// rateGeneral is every other route's: the framework, the admin API and
	// the hosted pages.
	rateGeneral = rateRule{name: "general", limit: 100, window: 10 * time.Second, perRoute: true}
	// ratePublic is for public documents: discovery, the key set, the
	// contracts, the explorer and the pages' assets. Relying parties and
	// browsers behind one address share it.
	ratePublic = rateRule{name: "public", limit: 600, window: time.Minute}
	// rateUnmatched is shared by every request no route matches, so a
	// client cannot create keys by inventing paths.
	rateUnmatched = rateRule{name: "unmatched", limit: 100, window: 10 * time.Second}
	// rateRefusedKey counts requests whose service key was refused, per
	// address; the budget of valid keys is in Config.ServiceKeyLimit.
	rateRefusedKey = rateRule{name: "refused-service-key", limit: 100, window: 10 * time.Second}
	// rateServiceKey marks trusted routes: they are limited per key.
	rateServiceKey = rateRule{name: "service-key", byServiceKey: true}
)

// rateMetadata is the huma.Operation metadata entry holding its rule.
const rateMetadata = "gatehouse.rateRule"

// withRate declares o's rate rule.
func withRate(o huma.Operation, r rateRule) huma.Operation {
	md := make(map[string]any, len(o.Metadata)+1)
	for k, v := range o.Metadata {
		md[k] = v
	}
	md[rateMetadata] = r
	o.Metadata = md
	return o
}

// operationRate is the rule o declares, or its contract's default: per key
// for operations secured by a service key, the general rule otherwise.
func operationRate(o huma.Operation) rateRule {
	if r, ok := o.Metadata[rateMetadata].(rateRule); ok {
		return r
	}
	for _, req := range o.Security {
		if _, ok := req[schemeKeyBearer]; ok {
			return rateServiceKey
		}
	}
	return rateGeneral
}

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

// routeRate records the rule of the route method and gin template path.
func (s *Server) routeRate(method, path string, r rateRule) {
	if s.rates == nil {
		s.rates = map[string]rateRule{}
	}
	s.rates[method+" "+path] = r
}

// handle registers a plain gin route (outside the contracts) with its rule.
func (s *Server) handle(method, path string, r rateRule, h gin.HandlerFunc) {
	s.routeRate(method, path, r)
	s.engine.Handle(method, path, h)
}

// checkRates panics unless every route declared a rule, so a route added
// without one fails at start-up rather than going unlimited.
func (s *Server) checkRates() {
	for _, r := range s.engine.Routes() {
		if _, ok := s.rates[r.Method+" "+r.Path]; !ok {
			panic("httpapi: route " + r.Method + " " + r.Path + " declares no rate rule")
		}
	}
}

// rateLimit counts each request against its route's rule before the
// handler runs, keyed by the rule and the client address (IPv6 by its /64).
// Trusted routes are counted per service key by Server.serviceKey instead.
func (s *Server) rateLimit() gin.HandlerFunc {
	return func(c *gin.Context) {
		if !s.cfg.RateLimit {
			c.Next()
			return
		}
		rule, name := rateUnmatched, rateUnmatched.name
		if tmpl := c.FullPath(); tmpl != "" {
			if r, ok := s.rates[c.Request.Method+" "+tmpl]; ok {
				rule, name = r, r.name
				if r.perRoute {
					name += ":" + tmpl
				}
			}
		}
		if rule.limit == 0 || rule.byServiceKey {
			c.Next()
			return
		}
		if err := s.throttle(c.Request.Context(), name+"|"+clientKey(c.ClientIP()), rule); err != nil {
			s.abortWithError(c, err)
			return
		}
		c.Next()
	}
}

// throttle counts one request for key under rule's limit, or returns a
// RateLimited error.
func (s *Server) throttle(ctx context.Context, key string, r rateRule) error {
	return s.app.Commands.Throttle.Handle(ctx, command.Throttle{Key: key, Limit: r.limit, Window: r.window})
}

// throttleServiceKey counts a trusted request against its key's budget
// (Config.ServiceKeyLimit per ServiceKeyWindow), whatever address it comes
// from: backends behind one outbound address each have their own budget.
func (s *Server) throttleServiceKey(ctx context.Context, id domain.ServiceKeyID) error {
	if !s.cfg.RateLimit {
		return nil
	}
	r := rateRule{name: rateServiceKey.name, limit: s.cfg.ServiceKeyLimit, window: s.cfg.ServiceKeyWindow}
	return s.throttle(ctx, r.name+"|"+string(id), r)
}

// throttleRefusedKey counts a request whose service key was refused against
// its address, so nobody can send unlimited guesses.
func (s *Server) throttleRefusedKey(ctx context.Context) error {
	if !s.cfg.RateLimit {
		return nil
	}
	key := rateRefusedKey.name + "|" + clientKey(requestInfoFrom(ctx).clientIP)
	return s.throttle(ctx, key, rateRefusedKey)
}
