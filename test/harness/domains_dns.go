package harness

import (
	"testing"
	"time"
)

// The verification window and the grace period of DNSLifecycleEnv: far
// longer than a test takes, so neither ends by itself; a test ends them by
// advancing the app's clock.
const (
	DNSWindow = 10 * time.Minute
	DNSGrace  = 5 * time.Minute
)

// Timings for driving the life cycle: a pending domain fails DNSWindow after
// its claim, a verified one DNSGrace after losing a record, on the app's
// clock; the verifier looks for due domains every 50 ms of the wall clock
// (its ticker's), and checks a pending domain every 50 ms of the app's,
// backing off to 200 ms, and a verified one every 100 ms.
var DNSLifecycleEnv = Env(AdminEnv, map[string]string{
	"GATEHOUSE_DOMAIN_VERIFICATION_WINDOW": DNSWindow.String(),
	"GATEHOUSE_DOMAIN_GRACE_PERIOD":        DNSGrace.String(),
	"GATEHOUSE_DOMAIN_CHECK_INTERVAL":      "50ms",
	"GATEHOUSE_DOMAIN_CHECK_MAX_INTERVAL":  "200ms",
	"GATEHOUSE_DOMAIN_RECHECK_INTERVAL":    "100ms",
})

// PollDeadline bounds every wait for the verifier: generous, as the
// verifier's pace depends on the machine's load; tests never assert timings.
const PollDeadline = 30 * time.Second

// waitFor polls domain id until ok accepts it, and returns it; it fails
// with the last state seen after PollDeadline.
func (k *DomainKit) WaitFor(id, what string, ok func(d map[string]any) bool) map[string]any {
	k.T.Helper()
	deadline := time.Now().Add(PollDeadline)
	for {
		d := k.MustGet(id)
		if ok(d) {
			return d
		}
		if time.Now().After(deadline) {
			k.T.Fatalf("domain %s never reached %q; last %v", id, what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitStatus waits for domain id to be in status.
func (k *DomainKit) WaitStatus(id, status string) map[string]any {
	k.T.Helper()
	return k.WaitFor(id, status, func(d map[string]any) bool { return d["status"] == status })
}

// Challenge returns the TXT record's name and value of domain d.
func Challenge(t testing.TB, d map[string]any) (name, value string) {
	t.Helper()
	txt := Record(t, d, "TXT")
	return txt["name"].(string), txt["value"].(string)
}
