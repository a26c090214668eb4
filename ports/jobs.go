package ports

import "context"

// Jobs runs work after the request that asked for it has been answered, so
// that the answer and its timing do not depend on what the work finds.
// Implementations are safe for concurrent use and run jobs one at a time in
// the order they were queued.
type Jobs interface {
	// Enqueue queues fn, named name in logs, and returns at once. fn gets a
	// context with ctx's values but not its cancellation; an error it
	// returns is logged. A full or closed queue gives an error of kind
	// domain.KindUnavailable and fn does not run.
	Enqueue(ctx context.Context, name string, fn func(ctx context.Context) error) error
}
