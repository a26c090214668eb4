package domain

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestNormalizeHostname_accepts(t *testing.T) {
	label63 := strings.Repeat("a", 63)
	// 63+63+63+57+3 characters and four dots: 253 in all.
	name253 := label63 + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 57) + ".com"
	for _, tc := range []struct{ name, in, want string }{
		{"lower case", "example.com", "example.com"},
		{"upper case", "WWW.Example.COM", "www.example.com"},
		{"trailing dot", "example.com.", "example.com"},
		{"ideographic full stop", "example。com", "example.com"},
		{"trailing ideographic full stop", "example.com。", "example.com"},
		{"surrounding spaces", " \texample.com \n", "example.com"},
		{"IDN to punycode", "bücher.example", "xn--bcher-kva.example"},
		{"IDN upper case", "BÜCHER.example", "xn--bcher-kva.example"},
		{"IDN top-level label", "example.рф", "example.xn--p1ai"},
		{"punycode kept", "xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"full-width letters", "ＥＸＡＭＰＬＥ.com", "example.com"},
		{"label of 63", label63 + ".com", label63 + ".com"},
		{"IDN label of 63 once encoded", strings.Repeat("a", 55) + "ü.com", ""},
		{"total of 253", name253, name253},
		{"total of 253 and a trailing dot", name253 + ".", name253},
		{"under a two-label public suffix", "example.co.uk", "example.co.uk"},
		{"subdomain", "a.b.c.example.com", "a.b.c.example.com"},
		{"hyphen inside", "my-site.example.com", "my-site.example.com"},
		{"two hyphens not at 3 and 4", "a--b.example.com", "a--b.example.com"},
		{"digits", "123.example.com", "123.example.com"},
		{"digit label before a TLD", "123.com", "123.com"},
		{"under a private suffix", "foo.github.io", "foo.github.io"},
		{"under a private suffix, upper case", "FOO.GITHUB.IO", "foo.github.io"},
		{"exception to a wildcard rule", "www.ck", "www.ck"},
		{"last label not numeric", "example.0xg", "example.0xg"},
		{"unknown top-level domain", "foo.example", "foo.example"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NormalizeHostname(tc.in, "hostname")
			if err != nil {
				t.Fatalf("NormalizeHostname(%q) = %v", tc.in, err)
			}
			want := tc.want
			if want == "" { // only the length is known: xn-- and 59 more
				if l := strings.Split(got, ".")[0]; len(l) != 63 || !strings.HasPrefix(l, "xn--") {
					t.Fatalf("NormalizeHostname(%q) = %q, want a first label of 63 starting xn--", tc.in, got)
				}
				return
			}
			if got != want {
				t.Fatalf("NormalizeHostname(%q) = %q, want %q", tc.in, got, want)
			}
		})
	}
}

func TestNormalizeHostname_refuses(t *testing.T) {
	label64 := strings.Repeat("a", 64)
	name254 := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 58) + ".com"
	const (
		empty    = "must not be empty"
		wildcard = "must not be a wildcard"
		ip       = "not an IP address"
		syntax   = "must be a valid DNS name"
		length   = "at most 253"
		label    = "1 to 63 characters"
		single   = "at least two labels"
		suffix   = "public suffix"
	)
	for _, tc := range []struct{ name, in, why string }{
		{"empty", "", empty},
		{"spaces", "   ", empty},
		{"only a dot", ".", empty},
		{"label of 64", label64 + ".com", label},
		{"IDN label of 64 once encoded", strings.Repeat("a", 56) + "ü.com", label},
		{"total of 254", name254, length},
		{"empty label", "a..b", label},
		{"leading dot", ".example.com", label},
		{"two trailing dots", "example.com..", label},
		{"single label", "localhost", single},
		{"single IDN label", "bücher", single},
		{"IPv4", "192.0.2.1", ip},
		{"IPv4 with a trailing dot", "192.0.2.1.", ip},
		{"numeric last label", "example.123", ip},
		{"hexadecimal last label", "1.2.3.0x4", ip},
		{"IPv6", "2001:db8::1", syntax + "|" + ip},
		{"IPv6 loopback", "::1", ip},
		{"IPv6 in brackets", "[2001:db8::1]", ip},
		{"IPv6 with a zone", "fe80::1%eth0", ip},
		{"wildcard", "*.example.com", wildcard},
		{"wildcard inside", "a.*.example.com", wildcard},
		{"top-level domain", "com", single},
		{"two-label public suffix", "co.uk", suffix},
		{"two-label public suffix, upper case", "CO.UK.", suffix},
		{"private public suffix", "github.io", suffix},
		{"private public suffix, appspot", "appspot.com", suffix},
		{"wildcard rule of the list", "example.ck", suffix},
		{"underscore label", "_dmarc.example.com", syntax},
		{"underscore inside", "foo_bar.example.com", syntax},
		{"leading hyphen", "-a.example.com", syntax},
		{"trailing hyphen", "a-.example.com", syntax},
		{"hyphens at 3 and 4", "ab--cd.example.com", syntax},
		{"bad punycode", "xn--abc.example", syntax},
		{"empty punycode", "xn--.com", syntax + "|" + label},
		{"space inside", "ex ample.com", syntax},
		{"port", "example.com:443", syntax},
		{"slash", "example.com/path", syntax},
		{"at sign", "user@example.com", syntax},
		{"zero-width joiner", "\u200d.example.com", syntax},
		{"NUL", "a\x00.example.com", syntax},
		{"invalid UTF-8", "\xff.example.com", syntax},
		{"replacement character", "\uFFFD.example.com", syntax},
		{"ideographic full stop after a dot", "example.com.。", label},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, loc := range []string{"hostname", "hostname"} {
				got, err := NormalizeHostname(tc.in, loc)
				var de *Error
				if !errors.As(err, &de) || de.Kind != KindInvalid || de.Code != "domain.invalid_hostname" {
					t.Fatalf("NormalizeHostname(%q) = %q, %v; want a domain.invalid_hostname error", tc.in, got, err)
				}
				if got != "" {
					t.Errorf("NormalizeHostname(%q) returned %q with its error", tc.in, got)
				}
				if len(de.Fields) != 1 || de.Fields[0].Field != loc {
					t.Fatalf("NormalizeHostname(%q) fields = %+v, want one at %s", tc.in, de.Fields, loc)
				}
				if !matchesAny(de.Fields[0].Message, tc.why) {
					t.Errorf("NormalizeHostname(%q) says %q, want it to say %q", tc.in, de.Fields[0].Message, tc.why)
				}
			}
		})
	}
}

func matchesAny(msg, alternatives string) bool {
	for a := range strings.SplitSeq(alternatives, "|") {
		if strings.Contains(msg, a) {
			return true
		}
	}
	return false
}

// FuzzNormalizeHostname checks that NormalizeHostname never panics, that
// what it accepts is a lower-case ASCII DNS name within the limits, and that
// it is idempotent: the output normalises to itself.
func FuzzNormalizeHostname(f *testing.F) {
	for _, s := range []string{"example.com", "Bücher.Example.", "co.uk", "a..b", "[::1]", "*.x.com", "xn--bcher-kva.example",
		"example。com。", "1.2.3.0x4", "ＥＸＡＭＰＬＥ.com", "foo.github.io", strings.Repeat("a.", 130) + "com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := NormalizeHostname(in, "hostname")
		if err != nil {
			var de *Error
			if !errors.As(err, &de) || de.Kind != KindInvalid || len(de.Fields) != 1 || de.Fields[0].Field != "hostname" {
				t.Fatalf("NormalizeHostname(%q) error %v is not a located validation error", in, err)
			}
			return
		}
		if out == "" || len(out) > 253 || out != strings.ToLower(out) || !utf8.ValidString(out) || strings.HasSuffix(out, ".") {
			t.Fatalf("NormalizeHostname(%q) = %q, not a normalised name", in, out)
		}
		for i := range len(out) {
			if c := out[i]; c >= 0x80 || !(c == '.' || c == '-' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
				t.Fatalf("NormalizeHostname(%q) = %q holds %q", in, out, c)
			}
		}
		again, err := NormalizeHostname(out, "hostname")
		if err != nil || again != out {
			t.Fatalf("NormalizeHostname(%q) = %q, but that normalises to %q, %v", in, out, again, err)
		}
	})
}

// The policy of the life-cycle tests: checks a minute apart at first,
// doubling up to an hour; a week to verify; three days of grace.
var testPolicy = VerificationPolicy{
	Window: 7 * 24 * time.Hour, Grace: 72 * time.Hour,
	Interval: time.Minute, MaxInterval: time.Hour, Recheck: 24 * time.Hour,
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	testTXTName  = "_gatehouse-challenge.example.com"
	testTXTValue = "gatehouse-verification=tok123"
	testCNAME    = "edge.gatehouse.example"
)

func newTestDomain(cname string) *Domain {
	return NewDomain("d1", "example.com", "o1", "tok123", cname, t0)
}

// published is what DNS answers once the owner published both records.
func published() []Observation {
	return []Observation{
		{Type: RecordTXT, Name: testTXTName, Values: []string{"v=spf1 -all", testTXTValue}},
		{Type: RecordCNAME, Name: "example.com", Values: []string{testCNAME}},
	}
}

// nothing is what DNS answers before anything is published.
func nothing() []Observation {
	return []Observation{{Type: RecordTXT, Name: testTXTName}, {Type: RecordCNAME, Name: "example.com"}}
}

func mustStatus(t *testing.T, d *Domain, want DomainStatus) {
	t.Helper()
	if d.Status() != want {
		t.Fatalf("status = %s, want %s", d.Status(), want)
	}
}

func mustTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func TestNewDomain(t *testing.T) {
	d := newTestDomain(testCNAME)
	mustStatus(t, d, DomainPending)
	want := []DNSRecord{
		{Type: RecordTXT, Name: testTXTName, Value: testTXTValue, Required: true, Status: RecordUnchecked},
		{Type: RecordCNAME, Name: "example.com", Value: testCNAME, Required: true, Status: RecordUnchecked},
	}
	if got := d.Records(); !reflect.DeepEqual(got, want) {
		t.Fatalf("records = %+v, want %+v", got, want)
	}
	mustTime(t, "next check", d.NextCheckAt(), t0)
	mustTime(t, "created", d.CreatedAt(), t0)
	mustTime(t, "updated", d.UpdatedAt(), t0)
	if s := d.State(); !s.WindowStart.Equal(t0) || s.Token != "tok123" || s.OrganizationID != "o1" || d.Attempts() != 0 {
		t.Fatalf("state = %+v", s)
	}
	if !d.LastCheckedAt().IsZero() || !d.VerifiedAt().IsZero() || !d.FailedAt().IsZero() || d.ManualReason() != "" {
		t.Fatalf("a new domain has check times or a reason: %+v", d.State())
	}
	if got := NewDomain("d2", "example.com", "", "tok", "", t0).Records(); len(got) != 1 || got[0].Type != RecordTXT {
		t.Fatalf("without a CNAME target the records are %+v, want the TXT record alone", got)
	}
}

func TestObserve_pendingToVerified(t *testing.T) {
	d := newTestDomain(testCNAME)
	at := t0.Add(5 * time.Minute)
	if !d.Observe(published(), at, testPolicy) {
		t.Fatal("Observe reported no change")
	}
	mustStatus(t, d, DomainVerified)
	mustTime(t, "verified", d.VerifiedAt(), at)
	mustTime(t, "last checked", d.LastCheckedAt(), at)
	mustTime(t, "updated", d.UpdatedAt(), at)
	mustTime(t, "next check", d.NextCheckAt(), at.Add(testPolicy.Recheck))
	if d.Attempts() != 0 {
		t.Fatalf("attempts = %d, want 0", d.Attempts())
	}
	for _, r := range d.Records() {
		if r.Status != RecordFound {
			t.Fatalf("record %s status %s, want found", r.Type, r.Status)
		}
		mustTime(t, "record checked", r.LastCheckedAt, at)
	}
	if got := d.Records()[0].Observed; !reflect.DeepEqual(got, []string{"v=spf1 -all", testTXTValue}) {
		t.Fatalf("TXT observed = %q", got)
	}
	// A recheck that finds the records again changes nothing but the times.
	later := at.Add(testPolicy.Recheck)
	if d.Observe(published(), later, testPolicy) {
		t.Fatal("a recheck of a verified domain reported a change")
	}
	mustTime(t, "verified", d.VerifiedAt(), at)
	mustTime(t, "next check", d.NextCheckAt(), later.Add(testPolicy.Recheck))
}

func TestObserve_pendingBacksOffUntilTheWindowEnds(t *testing.T) {
	d := newTestDomain(testCNAME)
	end := t0.Add(testPolicy.Window)
	wantDelay := testPolicy.Interval
	now := d.NextCheckAt()
	for attempt := 1; ; attempt++ {
		changed := d.Observe(nothing(), now, testPolicy)
		if now.Equal(end) {
			if !changed {
				t.Fatal("the check at the window's end reported no change")
			}
			mustStatus(t, d, DomainFailed)
			mustTime(t, "failed", d.FailedAt(), end)
			if !d.NextCheckAt().IsZero() {
				t.Fatalf("a failed domain has a check due at %v", d.NextCheckAt())
			}
			if attempt < 170 {
				t.Fatalf("failed after %d attempts, want about 170 (a week at the hourly cap)", attempt)
			}
			return
		}
		if changed {
			t.Fatalf("attempt %d at %v changed the status to %s", attempt, now, d.Status())
		}
		mustStatus(t, d, DomainPending)
		if d.Attempts() != attempt {
			t.Fatalf("attempts = %d, want %d", d.Attempts(), attempt)
		}
		next := d.NextCheckAt()
		want := now.Add(wantDelay)
		if want.After(end) {
			want = end
		}
		if !next.Equal(want) {
			t.Fatalf("attempt %d at %v: next check %v, want %v", attempt, now, next, want)
		}
		wantDelay = min(2*wantDelay, testPolicy.MaxInterval)
		now = next
	}
}

func TestObserve_pendingBackoffDoublesToTheCap(t *testing.T) {
	d := newTestDomain("")
	var delays []time.Duration
	now := t0
	for range 9 {
		d.Observe(nothing(), now, testPolicy)
		delays = append(delays, d.NextCheckAt().Sub(now))
		now = d.NextCheckAt()
	}
	m := time.Minute
	want := []time.Duration{m, 2 * m, 4 * m, 8 * m, 16 * m, 32 * m, 60 * m, 60 * m, 60 * m}
	if !reflect.DeepEqual(delays, want) {
		t.Fatalf("delays = %v, want %v", delays, want)
	}
}

func TestObserve_lateCheckAfterTheWindowFails(t *testing.T) {
	d := newTestDomain(testCNAME)
	at := t0.Add(testPolicy.Window + 3*time.Hour) // the verifier was down
	if !d.Observe(nothing(), at, testPolicy) {
		t.Fatal("no change")
	}
	mustStatus(t, d, DomainFailed)
	mustTime(t, "failed", d.FailedAt(), at)
}

func TestObserve_recordsFoundAtTheWindowsEndVerify(t *testing.T) {
	d := newTestDomain(testCNAME)
	end := t0.Add(testPolicy.Window)
	d.Observe(published(), end, testPolicy)
	mustStatus(t, d, DomainVerified)
}

func TestObserve_verifiedLosesARecord(t *testing.T) {
	d := newTestDomain(testCNAME)
	verifiedAt := t0.Add(time.Minute)
	d.Observe(published(), verifiedAt, testPolicy)

	// The TXT record disappears; the CNAME stays.
	lost := []Observation{{Type: RecordTXT, Name: testTXTName}, {Type: RecordCNAME, Name: "example.com", Values: []string{testCNAME}}}
	gone := verifiedAt.Add(testPolicy.Recheck)
	if d.Observe(lost, gone, testPolicy) {
		t.Fatal("a missing record failed the domain at once")
	}
	mustStatus(t, d, DomainVerified)
	if r := d.Records(); r[0].Status != RecordMissing || r[1].Status != RecordFound {
		t.Fatalf("records = %+v, want TXT missing and CNAME found", r)
	}
	if s := d.State(); !s.MissingSince.Equal(gone) || s.Attempts != 1 {
		t.Fatalf("missing since %v after %d attempts, want %v after 1", s.MissingSince, s.Attempts, gone)
	}
	mustTime(t, "next check", d.NextCheckAt(), gone.Add(testPolicy.Interval))

	// Checks within the grace period back off, never past its end.
	graceEnd := gone.Add(testPolicy.Grace)
	now := d.NextCheckAt()
	for now.Before(graceEnd) {
		if d.Observe(lost, now, testPolicy) {
			t.Fatalf("failed at %v, before the grace period ended at %v", now, graceEnd)
		}
		mustStatus(t, d, DomainVerified)
		if d.NextCheckAt().After(graceEnd) {
			t.Fatalf("next check %v is after the grace period's end %v", d.NextCheckAt(), graceEnd)
		}
		if s := d.State(); !s.MissingSince.Equal(gone) {
			t.Fatalf("missing since moved to %v", s.MissingSince)
		}
		now = d.NextCheckAt()
	}
	mustTime(t, "last check", now, graceEnd)
	if !d.Observe(lost, now, testPolicy) {
		t.Fatal("the check at the grace period's end reported no change")
	}
	mustStatus(t, d, DomainFailed)
	mustTime(t, "failed", d.FailedAt(), graceEnd)
	mustTime(t, "verified", d.VerifiedAt(), verifiedAt) // when it was last verified
	if !d.NextCheckAt().IsZero() {
		t.Fatalf("a failed domain has a check due at %v", d.NextCheckAt())
	}
}

func TestObserve_verifiedRecoversWithinGrace(t *testing.T) {
	d := newTestDomain(testCNAME)
	verifiedAt := t0.Add(time.Minute)
	d.Observe(published(), verifiedAt, testPolicy)
	gone := verifiedAt.Add(time.Hour)
	d.Observe(nothing(), gone, testPolicy)
	d.Observe(nothing(), gone.Add(time.Hour), testPolicy)
	back := gone.Add(testPolicy.Grace - time.Second)
	if d.Observe(published(), back, testPolicy) {
		t.Fatal("recovering reported a status change")
	}
	mustStatus(t, d, DomainVerified)
	s := d.State()
	if !s.MissingSince.IsZero() || s.Attempts != 0 {
		t.Fatalf("missing since %v, attempts %d; want both cleared", s.MissingSince, s.Attempts)
	}
	mustTime(t, "verified", d.VerifiedAt(), verifiedAt)
	mustTime(t, "next check", d.NextCheckAt(), back.Add(testPolicy.Recheck))
	// A later loss starts a new grace period.
	again := back.Add(testPolicy.Recheck)
	d.Observe(nothing(), again, testPolicy)
	if s := d.State(); !s.MissingSince.Equal(again) || s.Attempts != 1 {
		t.Fatalf("second loss: missing since %v, attempts %d", s.MissingSince, s.Attempts)
	}
}

func TestObserve_zeroGraceFailsAtOnce(t *testing.T) {
	p := testPolicy
	p.Grace = 0
	d := newTestDomain("")
	d.Observe(published(), t0, p)
	if !d.Observe(nothing(), t0.Add(time.Hour), p) {
		t.Fatal("no change")
	}
	mustStatus(t, d, DomainFailed)
}

func TestObserve_recordStatuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		obs  []Observation
		txt  RecordStatus
		cn   RecordStatus
		want DomainStatus
	}{
		{"no answer at all", nil, RecordMissing, RecordMissing, DomainPending},
		{"names without records", nothing(), RecordMissing, RecordMissing, DomainPending},
		{"other values", []Observation{
			{Type: RecordTXT, Name: testTXTName, Values: []string{"gatehouse-verification=other"}},
			{Type: RecordCNAME, Name: "example.com", Values: []string{"elsewhere.example"}},
		}, RecordMismatch, RecordMismatch, DomainPending},
		{"TXT compared exactly", []Observation{
			{Type: RecordTXT, Name: testTXTName, Values: []string{strings.ToUpper(testTXTValue), " " + testTXTValue}},
		}, RecordMismatch, RecordMissing, DomainPending},
		{"CNAME in upper case with a trailing dot", []Observation{
			{Type: RecordCNAME, Name: "example.com", Values: []string{"EDGE.Gatehouse.Example."}},
		}, RecordMissing, RecordFound, DomainPending},
		{"names compared case-insensitively", []Observation{
			{Type: RecordTXT, Name: strings.ToUpper(testTXTName), Values: []string{testTXTValue}},
			{Type: RecordCNAME, Name: "EXAMPLE.com", Values: []string{testCNAME}},
		}, RecordFound, RecordFound, DomainVerified},
		{"observations of other names and types ignored", []Observation{
			{Type: RecordTXT, Name: "example.com", Values: []string{testTXTValue}},
			{Type: RecordCNAME, Name: testTXTName, Values: []string{testCNAME}},
		}, RecordMissing, RecordMissing, DomainPending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newTestDomain(testCNAME)
			d.Observe(tc.obs, t0, testPolicy)
			r := d.Records()
			if r[0].Status != tc.txt || r[1].Status != tc.cn {
				t.Fatalf("TXT %s, CNAME %s; want %s, %s", r[0].Status, r[1].Status, tc.txt, tc.cn)
			}
			mustStatus(t, d, tc.want)
		})
	}
	// One record found is not enough while another is required.
	d := newTestDomain(testCNAME)
	d.Observe(published()[:1], t0, testPolicy)
	mustStatus(t, d, DomainPending)
	// A record that is not required does not hold verification back.
	s := newTestDomain(testCNAME).State()
	s.Records[1].Required = false
	d = RehydrateDomain(s)
	d.Observe(published()[:1], t0, testPolicy)
	mustStatus(t, d, DomainVerified)
	if d.Records()[1].Status != RecordMissing {
		t.Fatalf("optional CNAME status %s, want missing", d.Records()[1].Status)
	}
}

func TestObserve_keepsFewCleanValues(t *testing.T) {
	d := newTestDomain("")
	values := []string{strings.Repeat("x", 300), "nul\x00inside", "bad\xffutf8", "ok", strings.Repeat("é", 200), "sixth"}
	d.Observe([]Observation{{Type: RecordTXT, Name: testTXTName, Values: values}}, t0, testPolicy)
	got := d.Records()[0].Observed
	if len(got) != 5 {
		t.Fatalf("kept %d values, want 5", len(got))
	}
	if got[0] != strings.Repeat("x", 255) {
		t.Errorf("long value kept as %d bytes, want 255", len(got[0]))
	}
	if got[1] != "nul\uFFFDinside" || got[2] != "bad\uFFFDutf8" || got[3] != "ok" {
		t.Errorf("values = %q", got[1:4])
	}
	if !utf8.ValidString(got[4]) || len(got[4]) > 255 || len(got[4]) < 253 {
		t.Errorf("multibyte value cut to %d bytes (valid %v), want a character boundary at most 255", len(got[4]), utf8.ValidString(got[4]))
	}
}

func TestRequestCheck(t *testing.T) {
	t.Run("pending: due now", func(t *testing.T) {
		d := newTestDomain("")
		d.Observe(nothing(), t0, testPolicy)
		d.Observe(nothing(), d.NextCheckAt(), testPolicy)
		at := t0.Add(10 * time.Minute)
		d.RequestCheck(at)
		mustStatus(t, d, DomainPending)
		mustTime(t, "next check", d.NextCheckAt(), at)
		if s := d.State(); !s.WindowStart.Equal(t0) || s.Attempts != 2 {
			t.Fatalf("window start %v, attempts %d; want the window and attempts kept", s.WindowStart, s.Attempts)
		}
	})
	t.Run("failed: pending with a fresh window", func(t *testing.T) {
		d := newTestDomain("")
		failed := t0.Add(testPolicy.Window)
		d.Observe(nothing(), failed, testPolicy)
		mustStatus(t, d, DomainFailed)
		again := failed.Add(48 * time.Hour)
		d.RequestCheck(again)
		mustStatus(t, d, DomainPending)
		mustTime(t, "next check", d.NextCheckAt(), again)
		mustTime(t, "updated", d.UpdatedAt(), again)
		if s := d.State(); !s.WindowStart.Equal(again) || s.Attempts != 0 {
			t.Fatalf("window start %v, attempts %d; want %v, 0", s.WindowStart, s.Attempts, again)
		}
		// The new window runs from the request, not from the creation.
		d.Observe(nothing(), again.Add(testPolicy.Window-time.Second), testPolicy)
		mustStatus(t, d, DomainPending)
		mustTime(t, "next check", d.NextCheckAt(), again.Add(testPolicy.Window))
		d.Observe(published(), d.NextCheckAt(), testPolicy)
		mustStatus(t, d, DomainVerified)
	})
	t.Run("failed: observations alone do not revive it", func(t *testing.T) {
		d := newTestDomain("")
		failed := t0.Add(testPolicy.Window)
		d.Observe(nothing(), failed, testPolicy)
		later := failed.Add(time.Hour)
		if d.Observe(published(), later, testPolicy) {
			t.Fatal("a failed domain changed status without a requested check")
		}
		mustStatus(t, d, DomainFailed)
		mustTime(t, "failed", d.FailedAt(), failed)
		mustTime(t, "last checked", d.LastCheckedAt(), later)
		if d.Records()[0].Status != RecordFound || !d.NextCheckAt().IsZero() {
			t.Fatalf("record %s, next check %v; want found and none", d.Records()[0].Status, d.NextCheckAt())
		}
	})
}

func TestVerifyManually(t *testing.T) {
	d := newTestDomain(testCNAME)
	d.Observe(nothing(), t0, testPolicy)
	at := t0.Add(time.Hour)
	if err := d.VerifyManually("  checked with the registrar  ", at); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, d, DomainVerified)
	mustTime(t, "verified", d.VerifiedAt(), at)
	if d.ManualReason() != "checked with the registrar" || !d.NextCheckAt().IsZero() || d.Attempts() != 0 {
		t.Fatalf("reason %q, next check %v, attempts %d", d.ManualReason(), d.NextCheckAt(), d.Attempts())
	}
	// It sticks: a check that finds nothing, long after any grace, changes nothing.
	later := at.Add(30 * 24 * time.Hour)
	if d.Observe(nothing(), later, testPolicy) {
		t.Fatal("a check changed a domain verified by hand")
	}
	mustStatus(t, d, DomainVerified)
	mustTime(t, "last checked", d.LastCheckedAt(), later)
	if !d.NextCheckAt().IsZero() {
		t.Fatalf("a domain verified by hand has a check due at %v", d.NextCheckAt())
	}
	// Until a check is requested: DNS decides again, with the grace period.
	d.RequestCheck(later)
	if d.ManualReason() != "" {
		t.Fatalf("reason %q kept after a requested check", d.ManualReason())
	}
	mustTime(t, "next check", d.NextCheckAt(), later)
	d.Observe(nothing(), later, testPolicy)
	mustStatus(t, d, DomainVerified)
	d.Observe(nothing(), later.Add(testPolicy.Grace), testPolicy)
	mustStatus(t, d, DomainFailed)
	// A failed domain may be verified by hand too.
	if err := d.VerifyManually("owner proved it by mail", later.Add(testPolicy.Grace+time.Minute)); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, d, DomainVerified)
}

func TestVerifyManually_reason(t *testing.T) {
	for _, bad := range []string{"", "   ", strings.Repeat("é", MaxManualReasonLength+1)} {
		d := newTestDomain("")
		err := d.VerifyManually(bad, t0)
		var de *Error
		if !errors.As(err, &de) || de.Kind != KindInvalid || len(de.Fields) != 1 || de.Fields[0].Field != "reason" {
			t.Fatalf("VerifyManually(%d characters) = %v, want invalid at body.reason", utf8.RuneCountInString(bad), err)
		}
		mustStatus(t, d, DomainPending)
	}
	d := newTestDomain("")
	if err := d.VerifyManually(strings.Repeat("é", MaxManualReasonLength), t0); err != nil {
		t.Fatalf("a reason of %d characters: %v", MaxManualReasonLength, err)
	}
}

func TestDomain_stateRoundTripAndCopies(t *testing.T) {
	d := newTestDomain(testCNAME)
	d.Observe(published(), t0.Add(time.Minute), testPolicy)
	d.AssignOrganization("o2", t0.Add(2*time.Minute))
	if d.OrganizationID() != "o2" || !d.UpdatedAt().Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("organization %q updated %v", d.OrganizationID(), d.UpdatedAt())
	}
	s := d.State()
	if back := RehydrateDomain(s).State(); !reflect.DeepEqual(back, s) {
		t.Fatalf("round trip = %+v, want %+v", back, s)
	}
	// Neither the records returned nor the state given share memory with the domain.
	d.Records()[0].Observed[0] = "changed"
	s.Records[0].Observed[1] = "changed"
	if got := d.Records()[0].Observed; got[0] == "changed" || got[1] == "changed" {
		t.Fatalf("observed values changed through a copy: %q", got)
	}
	s2 := d.State()
	r := RehydrateDomain(s2)
	s2.Records[0].Observed[0] = "changed"
	if r.Records()[0].Observed[0] == "changed" {
		t.Fatal("RehydrateDomain kept the caller's slice")
	}
}

// Ensure an inconclusive check changes only the attempt count and the next
// check, with the same backoff as a conclusive miss.
func TestPostponeCheck(t *testing.T) {
	p := VerificationPolicy{Window: time.Hour, Grace: time.Hour, Interval: time.Minute, MaxInterval: 4 * time.Minute, Recheck: 24 * time.Hour}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := NewDomain("d1", "example.com", "", "tok", "", t0)
	before := d.State()
	for i, want := range []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 4 * time.Minute} {
		now := t0.Add(time.Duration(i) * time.Second)
		d.PostponeCheck(now, p)
		st := d.State()
		if st.Attempts != i+1 || !st.NextCheckAt.Equal(now.Add(want)) || !st.UpdatedAt.Equal(now) {
			t.Fatalf("after %d postponements: attempts %d, next %v, want %d and %v", i+1, st.Attempts, st.NextCheckAt, i+1, now.Add(want))
		}
		st.Attempts, st.NextCheckAt, st.UpdatedAt = before.Attempts, before.NextCheckAt, before.UpdatedAt
		if !reflect.DeepEqual(st, before) {
			t.Fatalf("PostponeCheck changed more than attempts and the next check: %+v", st)
		}
	}
}
