package ports

import (
	"context"
	"time"
)

// Clock tells the time. Implementations return UTC truncated to the
// microsecond, the precision every store keeps, so a value read back from
// storage equals the value written.
type Clock interface {
	Now() time.Time
}

// IDGenerator creates identifiers for new entities. Identifiers are unique,
// unguessable enough to be public, and sort roughly by creation time.
type IDGenerator interface {
	NewID() string
}

// HealthChecker reports whether a dependency can serve requests.
type HealthChecker interface {
	// Name is a short stable name for the dependency, such as "database".
	Name() string
	// Check returns nil when the dependency answers before ctx ends, and an
	// error of kind domain.KindUnavailable otherwise.
	Check(ctx context.Context) error
}
