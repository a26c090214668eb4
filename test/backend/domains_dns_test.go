package backend

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/dnsresolver/dnstest"
	"github.com/gatehouse/gatehouse/test/harness"
)

// dnsForEachStore runs fn in parallel on the stores a behaviour runs on
// (StoresOnce), each against a fresh app
// whose verifier runs and asks a fresh dnstest server, with env.
func dnsForEachStore(t *testing.T, env map[string]string, fn func(t *testing.T, k *harness.DomainKit, dns *dnstest.Server)) {
	t.Helper()
	for _, s := range harness.StoresOnce {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			// A fresh application: a nameserver of its own, a verifier that
			// checks every domain, and a clock that moves by hours.
			dns := dnstest.Start(t)
			app := harness.MustStart(t, s, harness.Env(env, map[string]string{"GATEHOUSE_DNS_NAMESERVER": dns.Addr()}))
			k := mustDomainKit(t, app)
			harness.StartDomainVerifier(t, app)
			fn(t, k, dns)
		})
	}
}

// waitQueries waits until dns has answered at least n more queries for name
// than before, so that the verifier has looked several times.
func waitQueries(t *testing.T, dns *dnstest.Server, name string, before, n int) {
	t.Helper()
	deadline := time.Now().Add(harness.PollDeadline)
	for dns.Queries(name, "") < before+n {
		if time.Now().After(deadline) {
			t.Fatalf("%s was queried %d times, want at least %d", name, dns.Queries(name, ""), before+n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// probes numbers the probe domains of mustVerifierPass.
var probes atomic.Int64

// mustVerifierPass waits until the verifier has run a whole pass that began
// after the call: it claims a probe domain, due at once (so the next pass
// takes it with every other due domain, the most overdue first), and waits
// for DNS to be asked about it twice, which only a later pass does.
func mustVerifierPass(t *testing.T, k *harness.DomainKit, dns *dnstest.Server) {
	t.Helper()
	name, _ := harness.Challenge(t, k.MustCreate(fmt.Sprintf("probe-%d.example.net", probes.Add(1)), ""))
	waitQueries(t, dns, name, 0, 2)
}

// Ensure a pending domain turns verified once its TXT challenge is
// published (after a wrong value shows as a mismatch), and that a verified
// domain turns failed when the record stays missing past the grace period.
func TestDomainLifecycle_verify_then_lose_the_record(t *testing.T) {
	t.Parallel()
	dnsForEachStore(t, harness.DNSLifecycleEnv, func(t *testing.T, k *harness.DomainKit, dns *dnstest.Server) {
		d := k.MustCreate("shop.example.com", "")
		id := harness.MustID(t, d)
		name, value := harness.Challenge(t, d)

		// Nothing published: checked, missing, still pending, backing off.
		d = k.WaitFor(id, "TXT missing", func(d map[string]any) bool { return harness.Record(t, d, "TXT")["status"] == "missing" })
		if d["status"] != "pending" || d["lastCheckedAt"] == nil || d["attempts"].(float64) < 1 || d["nextCheckAt"] == nil {
			t.Fatalf("after a miss = %v", d)
		}
		// A wrong value is a mismatch, with what was seen.
		dns.SetTXT(name, "gatehouse-verification=wrong", "v=spf1 -all")
		d = k.WaitFor(id, "TXT mismatch", func(d map[string]any) bool { return harness.Record(t, d, "TXT")["status"] == "mismatch" })
		if got := harness.ToStrings(harness.Record(t, d, "TXT")["observed"]); d["status"] != "pending" || !slices.Contains(got, "gatehouse-verification=wrong") || len(got) != 2 {
			t.Fatalf("after a mismatch = %v", d)
		}
		// The right value among others verifies it.
		dns.SetTXT(name, "v=spf1 -all", value)
		d = k.WaitStatus(id, "verified")
		txt := harness.Record(t, d, "TXT")
		if txt["status"] != "found" || !slices.Contains(harness.ToStrings(txt["observed"]), value) || d["attempts"] != float64(0) ||
			d["verifiedAt"] == nil || d["failedAt"] != nil || d["nextCheckAt"] == nil || d["manualVerificationReason"] != nil {
			t.Fatalf("verified = %v", d)
		}
		harness.MustJSDatesOrRFC3339(t, d, "verifiedAt", "lastCheckedAt", "nextCheckAt")
		recs := harness.MustOK(t, k.Call(http.MethodGet, harness.DomainsPath+"/"+id+"/dns-records", ""))
		if r := harness.MustObject(t, recs["records"].([]any)[0]); r["status"] != "found" || r["lastCheckedAt"] == nil || !slices.Contains(harness.ToStrings(r["observed"]), value) {
			t.Fatalf("dns-records = %v", recs)
		}
		if hosts, _ := k.ListDomains(map[string][]string{"status": {"verified"}}); !slices.Equal(hosts, []string{"shop.example.com"}) {
			t.Fatalf("verified listing = %v", hosts)
		}

		// Verified domains are rechecked; the record vanishing past the
		// grace period fails the domain.
		dns.RemoveTXT(name)
		d = k.WaitFor(id, "TXT missing", func(d map[string]any) bool { return harness.Record(t, d, "TXT")["status"] == "missing" })
		if d["status"] != "verified" || d["verifiedAt"] == nil {
			t.Fatalf("missing within grace = %v", d)
		}
		k.App.Clock.Advance(harness.DNSGrace + time.Second)
		d = k.WaitStatus(id, "failed")
		if d["failedAt"] == nil || d["nextCheckAt"] != nil || harness.Record(t, d, "TXT")["status"] != "missing" {
			t.Fatalf("failed = %v", d)
		}
		// A failed domain is not checked again by itself, however long
		// it waits.
		dns.SetTXT(name, value)
		before := dns.Queries(name, "")
		k.App.Clock.Advance(harness.DNSWindow)
		mustVerifierPass(t, k, dns)
		if got := k.MustGet(id); got["status"] != "failed" || dns.Queries(name, "") != before {
			t.Fatalf("a failed domain was checked again: %v (%d queries, had %d)", got, dns.Queries(name, ""), before)
		}
	})
}

// Ensure a pending domain that never publishes its records fails when the
// verification window ends, and that an administrator's recheck makes it
// pending again with a fresh window, then verified once published.
func TestDomainLifecycle_window_expiry_and_admin_recheck(t *testing.T) {
	t.Parallel()
	dnsForEachStore(t, harness.DNSLifecycleEnv, func(t *testing.T, k *harness.DomainKit, dns *dnstest.Server) {
		d := k.MustCreate("late.example.com", "")
		id := harness.MustID(t, d)
		name, value := harness.Challenge(t, d)

		k.WaitFor(id, "first check", func(d map[string]any) bool { return d["lastCheckedAt"] != nil })
		k.App.Clock.Advance(harness.DNSWindow)
		d = k.WaitStatus(id, "failed")
		if d["failedAt"] == nil || d["nextCheckAt"] != nil || d["verifiedAt"] != nil || d["attempts"].(float64) < 2 || harness.Record(t, d, "TXT")["status"] != "missing" {
			t.Fatalf("failed = %v", d)
		}

		dns.SetTXT(name, value)
		rechecked := harness.MustOK(t, k.Patch(k.Admin, id, `{"recheck":true}`))
		if rechecked["status"] != "pending" || rechecked["attempts"] != float64(0) || rechecked["nextCheckAt"] == nil {
			t.Fatalf("after recheck = %v", rechecked)
		}
		d = k.WaitStatus(id, "verified")
		if harness.Record(t, d, "TXT")["status"] != "found" || d["failedAt"] == nil {
			t.Fatalf("verified after recheck = %v (failedAt keeps the last failure)", d)
		}
		entries := harness.AuditAll(t, k.Admin, map[string][]string{"action": {"admin.update-domain"}, "targetId": {id}})
		if len(entries) != 1 || entries[0]["outcome"] != "success" || entries[0]["actorId"] != k.AdminID {
			t.Fatalf("recheck audit = %v", entries)
		}
	})
}

// Ensure a verified domain survives a disappearance of its record shorter
// than the grace period (here an hour, so the test cannot race it).
func TestDomainLifecycle_short_disappearance_within_grace(t *testing.T) {
	t.Parallel()
	env := harness.Env(harness.DNSLifecycleEnv, map[string]string{"GATEHOUSE_DOMAIN_GRACE_PERIOD": "1h"})
	dnsForEachStore(t, env, func(t *testing.T, k *harness.DomainKit, dns *dnstest.Server) {
		d := k.MustCreate("steady.example.com", "")
		id := harness.MustID(t, d)
		name, value := harness.Challenge(t, d)
		dns.SetTXT(name, value)
		verifiedAt := k.WaitStatus(id, "verified")["verifiedAt"]

		dns.RemoveTXT(name)
		d = k.WaitFor(id, "TXT missing", func(d map[string]any) bool { return harness.Record(t, d, "TXT")["status"] == "missing" })
		if d["status"] != "verified" || d["attempts"].(float64) < 1 {
			t.Fatalf("within grace = %v", d)
		}
		dns.SetTXT(name, value)
		d = k.WaitFor(id, "TXT found again", func(d map[string]any) bool { return harness.Record(t, d, "TXT")["status"] == "found" })
		if d["status"] != "verified" || d["attempts"] != float64(0) || d["verifiedAt"] != verifiedAt || d["failedAt"] != nil {
			t.Fatalf("after the record came back = %v (verifiedAt was %v)", d, verifiedAt)
		}
	})
}

// Ensure a failed lookup (SERVFAIL) proves nothing: a verified domain stays
// verified and a pending one pending, past the grace period and the window,
// with the last observation kept; once DNS answers again, checks resume.
func TestDomainLifecycle_servfail_leaves_the_status_alone(t *testing.T) {
	t.Parallel()
	dnsForEachStore(t, harness.DNSLifecycleEnv, func(t *testing.T, k *harness.DomainKit, dns *dnstest.Server) {
		verified := k.MustCreate("flaky.example.com", "")
		vid := harness.MustID(t, verified)
		vname, vvalue := harness.Challenge(t, verified)
		dns.SetTXT(vname, vvalue)
		verified = k.WaitStatus(vid, "verified")

		pending := k.MustCreate("unreachable.example.com", "")
		pid := harness.MustID(t, pending)
		pname, pvalue := harness.Challenge(t, pending)
		k.WaitFor(pid, "first check", func(d map[string]any) bool { return d["lastCheckedAt"] != nil })

		dns.ServFail(vname, true)
		dns.ServFail(pname, true)
		dns.RemoveTXT(vname) // what SERVFAIL hides would fail the domain if it were seen
		// A check whose answer came before SERVFAIL may still be applying
		// it; applied after the clock's jump, its "missing" would end the
		// pending domain's window and fail it. Let every pass that began
		// before SERVFAIL end first.
		mustVerifierPass(t, k, dns)
		// Past the grace period and the window, with the verifier still
		// asking.
		k.App.Clock.Advance(harness.DNSWindow + harness.DNSGrace)
		vBefore, pBefore := dns.Queries(vname, ""), dns.Queries(pname, "")
		waitQueries(t, dns, vname, vBefore, 3)
		waitQueries(t, dns, pname, pBefore, 3)
		// The verifier writes an attempt after its query is answered: wait
		// for the third to be counted, not just asked.
		p := k.WaitFor(pid, "three inconclusive checks counted", func(d map[string]any) bool {
			a, _ := d["attempts"].(float64)
			return a >= 3 || d["status"] != "pending"
		})
		v := k.MustGet(vid)
		if v["status"] != "verified" || harness.Record(t, v, "TXT")["status"] != "found" || v["failedAt"] != nil || v["verifiedAt"] != verified["verifiedAt"] {
			t.Fatalf("verified domain under SERVFAIL = %v", v)
		}
		if p["status"] != "pending" || p["failedAt"] != nil || p["attempts"].(float64) < 3 {
			t.Fatalf("pending domain under SERVFAIL = %v", p)
		}

		// DNS answers again: the pending domain's window is long over, so it
		// fails on the first conclusive miss; the verified one sees its
		// record gone and, past the grace period, fails too.
		dns.ServFail(pname, false)
		dns.ServFail(vname, false)
		k.WaitStatus(pid, "failed")
		k.WaitFor(vid, "TXT missing", func(d map[string]any) bool { return harness.Record(t, d, "TXT")["status"] == "missing" })
		k.App.Clock.Advance(harness.DNSGrace + time.Second)
		k.WaitStatus(vid, "failed")
		// Published and rechecked, the pending one verifies.
		dns.SetTXT(pname, pvalue)
		harness.MustOK(t, k.Patch(k.Admin, pid, `{"recheck":true}`))
		k.WaitStatus(pid, "verified")
	})
}

// Ensure that with a CNAME target configured every domain also needs a
// CNAME from its hostname to the target: the TXT alone leaves it pending,
// a CNAME elsewhere is a mismatch showing the first hop, and the right one
// (even when the target is itself an alias) verifies it.
func TestDomainLifecycle_cname_target(t *testing.T) {
	t.Parallel()
	env := harness.Env(harness.DNSLifecycleEnv, map[string]string{"GATEHOUSE_DOMAIN_CNAME_TARGET": "Edge.Gatehouse.Test."})
	dnsForEachStore(t, env, func(t *testing.T, k *harness.DomainKit, dns *dnstest.Server) {
		d := k.MustCreate("www.example.org", "")
		id := harness.MustID(t, d)
		cname := harness.Record(t, d, "CNAME")
		if len(d["records"].([]any)) != 2 || cname["name"] != "www.example.org" || cname["value"] != "edge.gatehouse.test" ||
			cname["required"] != true || cname["status"] != "unchecked" || d["records"].([]any)[0].(map[string]any)["type"] != "TXT" {
			t.Fatalf("records = %v", d["records"])
		}
		name, value := harness.Challenge(t, d)
		dns.SetTXT(name, value)
		dns.SetCNAME("www.example.org", "cdn.other.test")
		dns.SetCNAME("cdn.other.test", "edge.gatehouse.test") // the chain ends at the target, but the record points elsewhere
		d = k.WaitFor(id, "TXT found, CNAME mismatch", func(d map[string]any) bool {
			return harness.Record(t, d, "TXT")["status"] == "found" && harness.Record(t, d, "CNAME")["status"] == "mismatch"
		})
		if got := harness.ToStrings(harness.Record(t, d, "CNAME")["observed"]); d["status"] != "pending" || !slices.Equal(got, []string{"cdn.other.test"}) {
			t.Fatalf("with a CNAME elsewhere = %v", d)
		}

		dns.SetCNAME("www.example.org", "edge.gatehouse.test")
		dns.SetCNAME("edge.gatehouse.test", "lb-1.cloud.test") // the target is itself an alias
		d = k.WaitStatus(id, "verified")
		if c := harness.Record(t, d, "CNAME"); c["status"] != "found" || !slices.Equal(harness.ToStrings(c["observed"]), []string{"edge.gatehouse.test"}) {
			t.Fatalf("verified = %v", d)
		}

		// Without its CNAME, a second domain stays pending even with its TXT.
		other := k.MustCreate("api.example.org", "")
		oname, ovalue := harness.Challenge(t, other)
		dns.SetTXT(oname, ovalue)
		other = k.WaitFor(harness.MustID(t, other), "TXT found", func(d map[string]any) bool { return harness.Record(t, d, "TXT")["status"] == "found" })
		if other["status"] != "pending" || harness.Record(t, other, "CNAME")["status"] != "missing" {
			t.Fatalf("TXT without CNAME = %v", other)
		}
	})
}

// Ensure an administrator can mark a domain verified by hand, with a
// reason that is kept and audited; DNS no longer decides until a recheck
// hands it back, after which a missing record fails it past the grace.
func TestDomainLifecycle_manual_verification(t *testing.T) {
	t.Parallel()
	dnsForEachStore(t, harness.DNSLifecycleEnv, func(t *testing.T, k *harness.DomainKit, dns *dnstest.Server) {
		d := k.MustCreate("by-hand.example.com", "")
		id := harness.MustID(t, d)
		name, _ := harness.Challenge(t, d)
		k.WaitFor(id, "first check", func(d map[string]any) bool { return d["lastCheckedAt"] != nil })

		const reason = "Verified by phone with the registrant, ticket 4711"
		got := harness.MustOK(t, k.Patch(k.Admin, id, harness.MustJSON(t, map[string]any{"verify": map[string]any{"reason": "  " + reason + " "}})))
		if got["status"] != "verified" || got["manualVerificationReason"] != reason || got["verifiedAt"] == nil || got["nextCheckAt"] != nil || got["attempts"] != float64(0) {
			t.Fatalf("verified by hand = %v", got)
		}
		// Past the window and grace, with no record published, it stands,
		// and DNS is not asked.
		before := dns.Queries(name, "")
		k.App.Clock.Advance(harness.DNSWindow + harness.DNSGrace)
		mustVerifierPass(t, k, dns)
		if d := k.MustGet(id); d["status"] != "verified" || d["manualVerificationReason"] != reason || dns.Queries(name, "") != before {
			t.Fatalf("a domain verified by hand changed: %v (%d queries, had %d)", d, dns.Queries(name, ""), before)
		}

		// A recheck gives it back to DNS: verified while within grace, then
		// failed with its record missing.
		back := harness.MustOK(t, k.Patch(k.Admin, id, `{"recheck":true}`))
		if back["status"] != "verified" || back["manualVerificationReason"] != nil || back["nextCheckAt"] == nil {
			t.Fatalf("after recheck = %v", back)
		}
		d = k.WaitFor(id, "checked after the recheck", func(d map[string]any) bool { return d["lastCheckedAt"] != back["lastCheckedAt"] })
		if d["status"] != "verified" || harness.Record(t, d, "TXT")["status"] != "missing" {
			t.Fatalf("checked within grace = %v", d)
		}
		k.App.Clock.Advance(harness.DNSGrace + time.Second)
		k.WaitStatus(id, "failed")

		entries := harness.AuditAll(t, k.Admin, map[string][]string{"action": {"admin.update-domain"}, "targetId": {id}})
		if len(entries) != 2 || entries[0]["outcome"] != "success" || entries[1]["outcome"] != "success" || entries[1]["actorType"] != "user" {
			t.Fatalf("audit = %v", entries)
		}
		// A reason is required.
		harness.MustFieldProblem(t, k.Patch(k.Admin, id, `{"verify":{"reason":" "}}`), "body.verify.reason")
		if k.MustGet(id)["status"] != "failed" {
			t.Fatal("a refused verification was applied")
		}
	})
}

// Ensure "gatehouse serve" runs the verifier: a domain claimed from the
// running binary turns verified once its record is published in the
// configured nameserver, and the process still stops cleanly on SIGTERM.
func TestProcess_serve_verifies_domains(t *testing.T) {
	t.Parallel()
	dns := dnstest.Start(t)
	env := []string{"GATEHOUSE_SECRET=" + harness.TestSecret, "GATEHOUSE_BASE_URL=" + harness.CLIBaseURL, "GATEHOUSE_DATA_DIR=" + t.TempDir(),
		"GATEHOUSE_DNS_NAMESERVER=" + dns.Addr(), "GATEHOUSE_DOMAIN_CHECK_INTERVAL=50ms", "GATEHOUSE_DOMAIN_CHECK_MAX_INTERVAL=200ms"}
	out := harness.MustRunCLI(t, env, "", "service-key", "create", "--name", "domains", "--scopes", "domains:read,domains:write")
	sm := harness.CLISecretRE.FindStringSubmatch(out)
	if sm == nil {
		t.Fatalf("service-key create printed %q", out)
	}
	p := harness.StartProcess(t, env...)
	c := harness.ProcessClient(t, p)
	bearer := []string{"Authorization", "Bearer " + sm[1]}
	r := c.Post(harness.DomainsPath, `{"hostname":"shop.example.com"}`, bearer...)
	harness.MustStatus(t, r, http.StatusCreated)
	d := r.JSON(t)
	name, value := harness.Challenge(t, d)
	dns.SetTXT(name, value)
	deadline := time.Now().Add(harness.PollDeadline)
	for d["status"] != "verified" {
		if time.Now().After(deadline) {
			t.Fatalf("never verified: %v\nstdout: %s", d, p.Stdout)
		}
		time.Sleep(20 * time.Millisecond)
		d = harness.MustOK(t, c.Get(harness.DomainsPath+"/"+harness.MustID(t, d), bearer...))
	}
	// The verifier logs the transition after committing it, so the API can
	// answer "verified" before the line reaches stdout: wait for it.
	for !strings.Contains(p.Stdout.String(), `"msg":"domain status changed"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the transition was not logged:\n%s", p.Stdout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v\nstderr: %s", err, p.Stderr)
	}
}
