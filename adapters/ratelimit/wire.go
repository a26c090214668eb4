package ratelimit

import (
	"github.com/google/wire"

	"github.com/gatehouse/gatehouse/ports"
)

// Set provides the in-memory rate limiter with the default options; the
// injector's cleanup stops its janitor.
var Set = wire.NewSet(NewDefault, wire.Bind(new(ports.RateLimiter), new(*Memory)))
