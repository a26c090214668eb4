package ports

import (
	"context"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// Leases hands out named leases that end by themselves, so that among
// several replicas one at a time runs a singleton job, and another takes
// over when the holder stops renewing its lease (it stopped, or died).
// Times are the callers' clocks: replicas' clocks must agree to well
// within a lease. Implementations are safe for concurrent use, from this
// process and from every process sharing the store.
type Leases interface {
	// Acquire takes the lease name for holder until now+ttl, or renews it
	// when holder has it already, and reports whether holder has it now: a
	// lease another holder has is refused (false) until its end, at or
	// before now. Of concurrent calls for a free lease, one gets it. An
	// empty name or holder, or a ttl under a millisecond, is
	// domain.KindInvalid.
	Acquire(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error)
	// Release ends holder's lease name at once, so that another holder may
	// take it. A lease holder does not have is left alone.
	Release(ctx context.Context, name, holder string) error
}

// errLeaseRequest is a lease asked with no name or holder, or for less
// than a millisecond.
var errLeaseRequest = domain.Invalid("lease.invalid", "A lease needs a name, a holder and at least 1ms")

// ValidateLease returns an error of kind domain.KindInvalid for a lease
// without a name or holder, or shorter than a millisecond.
func ValidateLease(name, holder string, ttl time.Duration) error {
	if name == "" || holder == "" || ttl < time.Millisecond {
		return errLeaseRequest
	}
	return nil
}
