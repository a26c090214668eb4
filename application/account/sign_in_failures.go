package account

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// failureRecorder writes sign-in's wrong passwords to the credential after
// the answer. Written before it, the failed-attempt count made a wrong
// password for a known address about a millisecond slower than one for an
// unknown address, which has no credential to write (ASVS V6.3).
//
// The lockout still counts every failure: a failure is registered here
// before its answer is sent, and a right password, once its hash is done,
// waits for the user's writes still under way and reads the credential
// again before it signs anyone in. Across replicas a write is as late as a
// concurrent request's already was. A write under way when the process is
// killed is lost (one failure uncounted); a clean stop waits for them
// (SignIns.Wait).
type failureRecorder struct {
	credentials ports.CredentialRepository
	clock       ports.Clock
	lockout     domain.LockoutPolicy
	logger      *slog.Logger

	mu      sync.Mutex
	pending map[domain.UserID]*pendingFailures
	writes  sync.WaitGroup
}

// failureWriteDelay is how long a failure waits before it is written, so
// that the write does not slow down the answer of its own request.
const failureWriteDelay = 20 * time.Millisecond

// pendingFailures are the writes under way for one user; done closes when
// the last one ends.
type pendingFailures struct {
	n    int
	done chan struct{}
}

// record counts a wrong password for userID in the background.
func (fr *failureRecorder) record(ctx context.Context, userID domain.UserID) {
	fr.mu.Lock()
	if fr.pending == nil {
		fr.pending = map[domain.UserID]*pendingFailures{}
	}
	p := fr.pending[userID]
	if p == nil {
		p = &pendingFailures{done: make(chan struct{})}
		fr.pending[userID] = p
	}
	p.n++
	fr.mu.Unlock()

	ctx = context.WithoutCancel(ctx)
	fr.writes.Add(1)
	go func() {
		defer fr.writes.Done()
		// Start after the answer is out, not beside it (see jobs.DefaultDelay).
		time.Sleep(failureWriteDelay)
		defer func() {
			fr.mu.Lock()
			defer fr.mu.Unlock()
			if p.n--; p.n == 0 {
				close(p.done)
				delete(fr.pending, userID)
			}
		}()
		err := fr.credentials.Update(ctx, userID, func(c *domain.Credential) error {
			c.RecordFailure(fr.clock.Now(), fr.lockout)
			return nil
		})
		if err != nil {
			fr.logger.LogAttrs(ctx, slog.LevelError, "sign-in: failed attempt not recorded",
				slog.String("user_id", string(userID)), slog.String("error", err.Error()))
		}
	}()
}

// settle waits until the failures recorded for userID are written.
func (fr *failureRecorder) settle(ctx context.Context, userID domain.UserID) error {
	fr.mu.Lock()
	p := fr.pending[userID]
	fr.mu.Unlock()
	if p == nil {
		return nil
	}
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wait waits until every failure recorded so far is written, or ctx ends.
func (fr *failureRecorder) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { fr.writes.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
