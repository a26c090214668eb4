package account

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// Throttle counts one request against a limit.
type Throttle struct {
	Key    string
	Limit  int
	Window time.Duration
}

// Throttle returns a RateLimited error, saying when to retry, once the key is
// over its limit. A limiter that fails lets the request through: the limits
// protect the service, and an outage of the limiter must not become an
// outage of sign-in. The per-account lockout still holds.
func (h *SignIns) Throttle(ctx context.Context, cmd Throttle) error {
	ok, retry, err := h.limiter.Allow(ctx, cmd.Key, cmd.Limit, cmd.Window)
	if err != nil || ok {
		return nil
	}
	return &domain.Error{Kind: domain.KindRateLimited, Code: "auth.too_many_attempts",
		Message: "Too many requests. Please try again later.", RetryAfter: retry}
}
