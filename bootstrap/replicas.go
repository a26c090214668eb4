package bootstrap

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/gatehouse/gatehouse/ports"
)

// The leases of the work one replica at a time does. Everything else runs
// on every replica: the domain verifier, the mail relay and the webhook
// fan-out and sender claim their units of work one by one; the signing-key
// reload and the service-key use flush are each replica's own.
const (
	// leaseStart serialises the writes of start-up (the first signing
	// keys, the providers file), so replicas starting together on an empty
	// database make one key per algorithm and one copy of each provider.
	leaseStart = "start"
	// leasePurge makes one replica at a time run the purge.
	leasePurge = "purge"
	// leaseWebhookPurge makes one replica at a time purge old webhook
	// messages.
	leaseWebhookPurge = "webhook-purge"
)

// startLeaseTTL bounds how long a replica that died while starting keeps
// the others waiting.
const startLeaseTTL = 30 * time.Second

// leasePoll is how often a replica waiting for a lease asks again.
const leasePoll = 100 * time.Millisecond

// newReplicaID names this process in the leases it holds: the host, the
// process id and a random part, so a restarted process is a new holder.
func newReplicaID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return host + "/" + strconv.Itoa(os.Getpid()) + "/" + hex.EncodeToString(b[:])
}

// waitLease takes the lease name for holder, waiting while another holds
// it (at most until that lease ends, unless renewed), and returns the
// function that releases it.
func waitLease(ctx context.Context, leases ports.Leases, clock ports.Clock, name, holder string, ttl time.Duration) (release func(), err error) {
	for {
		ok, err := leases.Acquire(ctx, name, holder, clock.Now(), ttl)
		if err != nil {
			return nil, fmt.Errorf("lease %s: %w", name, err)
		}
		if ok {
			return func() { _ = leases.Release(context.WithoutCancel(ctx), name, holder) }, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lease %s: %w", name, ctx.Err())
		case <-time.After(leasePoll):
		}
	}
}

// singleton makes run a job one replica at a time runs: each run first
// takes or renews the lease name for ttl, and is skipped when another
// replica holds it. The holder renews it at every run, so it keeps the job
// while it lives; ttl, longer than the job's interval, is how long the
// others wait after it stops renewing.
func (a *App) singleton(name string, ttl time.Duration, run func(ctx context.Context) error) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		ok, err := a.leases.Acquire(ctx, name, a.replica, a.clock.Now(), ttl)
		if err != nil || !ok {
			return err
		}
		return run(ctx)
	}
}
