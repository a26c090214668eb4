package domain

import (
	"net/netip"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// DomainID identifies a Domain.
type DomainID string

// DomainStatus is where a domain is in its verification life cycle.
type DomainStatus string

// The statuses. A pending domain turns verified once every required DNS
// record is seen, or failed when its verification window ends first. A
// verified domain turns failed when a required record stays missing longer
// than the grace period. A failed domain is checked again only when an
// administrator asks (see RequestCheck).
const (
	DomainPending  DomainStatus = "pending"
	DomainVerified DomainStatus = "verified"
	DomainFailed   DomainStatus = "failed"
)

// RecordType is a DNS record type a domain's verification uses.
type RecordType string

// The record types.
const (
	RecordTXT   RecordType = "TXT"
	RecordCNAME RecordType = "CNAME"
)

// RecordStatus is what the last check saw of one record.
type RecordStatus string

// The record statuses.
const (
	RecordUnchecked RecordStatus = "unchecked" // never looked up yet
	RecordFound     RecordStatus = "found"     // the expected value was seen
	RecordMissing   RecordStatus = "missing"   // no such record
	RecordMismatch  RecordStatus = "mismatch"  // the record exists with other values
)

// ChallengePrefix is the label before the hostname of the TXT ownership
// record, and ChallengeValuePrefix starts its value.
const (
	ChallengePrefix      = "_gatehouse-challenge."
	ChallengeValuePrefix = "gatehouse-verification="
)

// DNSRecord is one record the owner of a domain publishes, with what the
// last check observed of it.
type DNSRecord struct {
	Type     RecordType
	Name     string // fully qualified, without the trailing dot
	Value    string // the expected value
	Required bool
	Status   RecordStatus
	// Observed are the values the last check saw (TXT strings, or the CNAME
	// target), at most a few, for the owner to compare with Value.
	Observed      []string
	LastCheckedAt time.Time
}

// Observation is what a DNS lookup returned for one record: the values
// seen, none when the name or record does not exist.
type Observation struct {
	Type   RecordType
	Name   string
	Values []string
}

// VerificationPolicy is when checks happen and how long a domain may stay
// unverified or lose its records.
type VerificationPolicy struct {
	// Window is how long a pending domain has to publish its records
	// before it fails (default 7 days).
	Window time.Duration
	// Grace is how long a verified domain's required record may be missing
	// before the domain fails.
	Grace time.Duration
	// Interval is the first delay between checks of a pending domain; it
	// doubles with every failed attempt up to MaxInterval.
	Interval    time.Duration
	MaxInterval time.Duration
	// Recheck is how often a verified domain is checked again.
	Recheck time.Duration
}

// Domain is a hostname that an organization (or the service) claims, and
// proves by publishing DNS records.
type Domain struct {
	id             DomainID
	hostname       string
	organizationID OrganizationID // "" when the domain belongs to no organization
	status         DomainStatus
	token          string // the random challenge, published in the TXT record
	records        []DNSRecord
	attempts       int       // checks since the domain became pending or lost a record
	lastCheckedAt  time.Time // zero before the first check
	nextCheckAt    time.Time // zero when no check is scheduled (failed, or verified by hand)
	windowStart    time.Time // when the current verification window opened
	missingSince   time.Time // when a verified domain's required record went missing
	verifiedAt     time.Time
	failedAt       time.Time
	manualReason   string // set when an administrator marked it verified by hand
	createdAt      time.Time
	updatedAt      time.Time
}

// DomainState is every field of a Domain, for stores to rehydrate one.
type DomainState struct {
	ID             DomainID
	Hostname       string
	OrganizationID OrganizationID
	Status         DomainStatus
	Token          string
	Records        []DNSRecord
	Attempts       int
	LastCheckedAt  time.Time
	NextCheckAt    time.Time
	WindowStart    time.Time
	MissingSince   time.Time
	VerifiedAt     time.Time
	FailedAt       time.Time
	ManualReason   string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// NewDomain returns a pending domain for an already normalised hostname
// (see NormalizeHostname), with its TXT challenge carrying token and, when
// cnameTarget is set, a required CNAME to it. Its first check is due now.
func NewDomain(id DomainID, hostname string, org OrganizationID, token, cnameTarget string, now time.Time) *Domain {
	records := []DNSRecord{{Type: RecordTXT, Name: ChallengePrefix + hostname, Value: ChallengeValuePrefix + token, Required: true, Status: RecordUnchecked}}
	if cnameTarget != "" {
		records = append(records, DNSRecord{Type: RecordCNAME, Name: hostname, Value: cnameTarget, Required: true, Status: RecordUnchecked})
	}
	return &Domain{id: id, hostname: hostname, organizationID: org, status: DomainPending, token: token, records: records,
		nextCheckAt: now, windowStart: now, createdAt: now, updatedAt: now}
}

// RehydrateDomain rebuilds a stored domain.
func RehydrateDomain(s DomainState) *Domain {
	return &Domain{id: s.ID, hostname: s.Hostname, organizationID: s.OrganizationID, status: s.Status, token: s.Token,
		records: cloneRecords(s.Records), attempts: s.Attempts, lastCheckedAt: s.LastCheckedAt, nextCheckAt: s.NextCheckAt,
		windowStart: s.WindowStart, missingSince: s.MissingSince, verifiedAt: s.VerifiedAt, failedAt: s.FailedAt,
		manualReason: s.ManualReason, createdAt: s.CreatedAt, updatedAt: s.UpdatedAt}
}

// State returns every field, for stores.
func (d *Domain) State() DomainState {
	return DomainState{ID: d.id, Hostname: d.hostname, OrganizationID: d.organizationID, Status: d.status, Token: d.token,
		Records: cloneRecords(d.records), Attempts: d.attempts, LastCheckedAt: d.lastCheckedAt, NextCheckAt: d.nextCheckAt,
		WindowStart: d.windowStart, MissingSince: d.missingSince, VerifiedAt: d.verifiedAt, FailedAt: d.failedAt,
		ManualReason: d.manualReason, CreatedAt: d.createdAt, UpdatedAt: d.updatedAt}
}

func cloneRecords(rs []DNSRecord) []DNSRecord {
	out := make([]DNSRecord, len(rs))
	for i, r := range rs {
		out[i] = r
		out[i].Observed = slices.Clone(r.Observed)
	}
	return out
}

// ID returns the domain's id.
func (d *Domain) ID() DomainID { return d.id }

// Hostname returns the normalised hostname.
func (d *Domain) Hostname() string { return d.hostname }

// OrganizationID returns the owning organization, or "".
func (d *Domain) OrganizationID() OrganizationID { return d.organizationID }

// Status returns the verification status.
func (d *Domain) Status() DomainStatus { return d.status }

// Records returns the DNS records to publish, with what was last observed.
func (d *Domain) Records() []DNSRecord { return cloneRecords(d.records) }

// Attempts returns how many checks ran since the domain became pending (or,
// verified, since a required record went missing).
func (d *Domain) Attempts() int { return d.attempts }

// LastCheckedAt returns when DNS was last checked (zero: never).
func (d *Domain) LastCheckedAt() time.Time { return d.lastCheckedAt }

// NextCheckAt returns when the next check is due (zero: none scheduled).
func (d *Domain) NextCheckAt() time.Time { return d.nextCheckAt }

// VerifiedAt returns when the domain was last verified (zero: never).
func (d *Domain) VerifiedAt() time.Time { return d.verifiedAt }

// FailedAt returns when the domain last failed (zero: never).
func (d *Domain) FailedAt() time.Time { return d.failedAt }

// ManualReason returns why an administrator marked it verified, or "".
func (d *Domain) ManualReason() string { return d.manualReason }

// CreatedAt returns when the domain was created.
func (d *Domain) CreatedAt() time.Time { return d.createdAt }

// UpdatedAt returns when the domain last changed.
func (d *Domain) UpdatedAt() time.Time { return d.updatedAt }

// AssignOrganization moves the domain to org ("" for none).
func (d *Domain) AssignOrganization(org OrganizationID, now time.Time) {
	d.organizationID, d.updatedAt = org, now
}

// RequestCheck schedules a check now. A failed domain becomes pending again
// with a fresh verification window. A domain verified by hand goes back to
// DNS: it stays verified, and the checks from now on decide (with the grace
// period) whether it stays so.
func (d *Domain) RequestCheck(now time.Time) {
	if d.status == DomainFailed {
		d.status, d.windowStart, d.attempts, d.missingSince = DomainPending, now, 0, time.Time{}
	}
	d.manualReason = ""
	d.nextCheckAt, d.updatedAt = now, now
}

// MaxManualReasonLength bounds the reason for a manual verification.
const MaxManualReasonLength = 500

// VerifyManually marks the domain verified by an administrator, for reason.
// DNS is no longer checked: the administrator's word stands until they
// request a check.
func (d *Domain) VerifyManually(reason string, now time.Time) error {
	reason = strings.TrimSpace(reason)
	if reason == "" || len([]rune(reason)) > MaxManualReasonLength {
		return Invalid("domain.invalid_reason", "Invalid reason", FieldViolation{Field: "reason", Message: "must be 1 to 500 characters"})
	}
	d.status, d.verifiedAt, d.manualReason = DomainVerified, now, reason
	d.attempts, d.missingSince, d.nextCheckAt, d.updatedAt = 0, time.Time{}, time.Time{}, now
	return nil
}

// Observe applies one DNS check's observations at now, following p: each
// record's status and observed values, then the domain's status, attempt
// count and next check. It returns whether the status changed.
func (d *Domain) Observe(obs []Observation, now time.Time, p VerificationPolicy) bool {
	allFound := true
	for i := range d.records {
		r := &d.records[i]
		r.Status, r.Observed = RecordMissing, nil
		for _, o := range obs {
			if o.Type != r.Type || !strings.EqualFold(o.Name, r.Name) {
				continue
			}
			r.Observed = observedValues(o.Values)
			if len(o.Values) > 0 {
				r.Status = RecordMismatch
			}
			for _, v := range o.Values {
				if recordValueMatches(r.Type, r.Value, v) {
					r.Status = RecordFound
				}
			}
		}
		r.LastCheckedAt = now
		if r.Required && r.Status != RecordFound {
			allFound = false
		}
	}
	before := d.status
	d.lastCheckedAt, d.updatedAt = now, now
	switch {
	case d.manualReason != "" && d.status == DomainVerified:
		// Verified by hand: observations are recorded, the status stands.
		d.nextCheckAt = time.Time{}
	case d.status == DomainFailed:
		// Failed: observations are recorded, and only RequestCheck starts
		// a new window; the time of failure stays the first one.
		d.nextCheckAt = time.Time{}
	case allFound:
		if d.status != DomainVerified {
			d.verifiedAt = now
		}
		d.status, d.attempts, d.missingSince, d.nextCheckAt = DomainVerified, 0, time.Time{}, now.Add(p.Recheck)
	case d.status == DomainVerified:
		if d.missingSince.IsZero() {
			d.missingSince = now
		}
		d.attempts++
		if now.Sub(d.missingSince) >= p.Grace {
			d.fail(now)
		} else {
			d.nextCheckAt = earliest(now.Add(backoff(p, d.attempts)), d.missingSince.Add(p.Grace))
		}
	default: // pending
		d.attempts++
		if now.Sub(d.windowStart) >= p.Window {
			d.fail(now)
		} else {
			d.nextCheckAt = earliest(now.Add(backoff(p, d.attempts)), d.windowStart.Add(p.Window))
		}
	}
	return d.status != before
}

// PostponeCheck records an inconclusive check at now (a lookup that failed:
// SERVFAIL, a timeout): one more attempt and the next check after the
// backoff, and nothing else. The status, records, window and grace period
// stand, so an outage of DNS (ours or the owner's) decides nothing; the next
// conclusive check applies the window and the grace period.
func (d *Domain) PostponeCheck(now time.Time, p VerificationPolicy) {
	d.attempts++
	d.nextCheckAt, d.updatedAt = now.Add(backoff(p, d.attempts)), now
}

func (d *Domain) fail(now time.Time) {
	d.status, d.failedAt, d.nextCheckAt = DomainFailed, now, time.Time{}
}

// backoff is the delay after the n-th failed attempt: Interval doubled n-1
// times, at most MaxInterval.
func backoff(p VerificationPolicy, n int) time.Duration {
	delay := p.Interval
	for i := 1; i < n && delay < p.MaxInterval; i++ {
		delay *= 2
	}
	return min(delay, p.MaxInterval)
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// maxObserved bounds the values kept of one observation, and the length of
// each, so a hostile zone cannot bloat a row.
const (
	maxObserved      = 5
	maxObservedValue = 255
)

// observedValues keeps the first values, each as valid UTF-8 without NUL
// (TXT strings are arbitrary bytes, which JSON columns refuse: PostgreSQL's
// jsonb rejects \u0000) and cut on a character boundary.
func observedValues(vs []string) []string {
	out := make([]string, 0, min(len(vs), maxObserved))
	for _, v := range vs {
		if len(out) == maxObserved {
			break
		}
		out = append(out, printableValue(v))
	}
	return out
}

func printableValue(v string) string {
	if len(v) > 4*maxObservedValue {
		v = v[:4*maxObservedValue] // bound the work before the clean-up
	}
	v = strings.ReplaceAll(strings.ToValidUTF8(v, "\uFFFD"), "\x00", "\uFFFD")
	if len(v) <= maxObservedValue {
		return v
	}
	cut := maxObservedValue
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut]
}

func recordValueMatches(t RecordType, want, got string) bool {
	if t == RecordCNAME {
		return strings.EqualFold(strings.TrimSuffix(got, "."), strings.TrimSuffix(want, "."))
	}
	return got == want
}

// Hostname limits (RFC 1035 §2.3.4): 63 octets a label, 253 in all
// (without the trailing dot).
const (
	maxLabelLength    = 63
	maxHostnameLength = 253
)

var hostnameProfile = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.StrictDomainName(true), idna.Transitional(false))

// NormalizeHostname returns hostname lower-cased, without a trailing dot, with
// internationalised labels in punycode, or a validation error located at
// location: it must be a syntactically valid DNS name of at least two
// labels, within label and total length, not an IP address, not a wildcard,
// and not itself a public suffix (such as com or co.uk) per the public
// suffix list.
func NormalizeHostname(hostname, location string) (string, error) {
	bad := func(msg string) error {
		return Invalid("domain.invalid_hostname", "Invalid hostname", FieldViolation{Field: location, Message: msg})
	}
	h := strings.TrimSpace(hostname)
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return "", bad("must not be empty")
	}
	if !utf8.ValidString(h) {
		// The IDNA mapping would turn a stray byte into U+FFFD and encode it.
		return "", bad("must be a valid DNS name (letters, digits and hyphens; labels may not start or end with a hyphen)")
	}
	if strings.Contains(h, "*") {
		return "", bad("must not be a wildcard")
	}
	if _, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		return "", bad("must be a name, not an IP address")
	}
	ascii, err := hostnameProfile.ToASCII(h)
	if err != nil {
		return "", bad("must be a valid DNS name (letters, digits and hyphens; labels may not start or end with a hyphen)")
	}
	ascii = strings.ToLower(ascii)
	if !strings.HasSuffix(h, ".") {
		// A trailing full stop other than ".", such as "。", maps to "." only now.
		ascii = strings.TrimSuffix(ascii, ".")
	}
	if len(ascii) > maxHostnameLength {
		return "", bad("must be at most 253 characters once encoded")
	}
	labels := strings.Split(ascii, ".")
	for _, l := range labels {
		if l == "" || len(l) > maxLabelLength {
			return "", bad("each label must be 1 to 63 characters once encoded")
		}
	}
	if len(labels) < 2 {
		return "", bad("must have at least two labels, such as example.com")
	}
	if _, err := netip.ParseAddr(ascii); err == nil || numericLabel(labels[len(labels)-1]) {
		return "", bad("must be a name, not an IP address")
	}
	if suffix, _ := publicsuffix.PublicSuffix(ascii); suffix == ascii {
		return "", bad("must not be a public suffix such as com or co.uk")
	}
	return ascii, nil
}

// numericLabel reports whether a last label makes the name an IPv4 address
// to URL parsers and inet_aton (WHATWG URL's "ends in a number"): decimal
// digits, or 0x followed by hexadecimal digits (1.2.3.0x4 is 1.2.3.4).
func numericLabel(s string) bool {
	if rest, ok := strings.CutPrefix(s, "0x"); ok {
		return strings.Trim(rest, "0123456789abcdef") == ""
	}
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// ErrHostnameTaken refuses a hostname another domain already has.
var ErrHostnameTaken = NewError(KindConflict, "domain.hostname_taken", "Another domain already has this hostname")

// ErrDomainNotFound is a missing domain.
var ErrDomainNotFound = NewError(KindNotFound, "domain.not_found", "Domain not found")

// The errors the stores return for this aggregate, created once so that
// every store answers each condition with the same kind, code and message.
var (
	ErrDomainExists = NewError(KindConflict, "exists", "a domain with this id already exists")
)
