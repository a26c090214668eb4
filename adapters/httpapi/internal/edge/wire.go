package edge

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gatehouse/gatehouse/domain"
)

// OrgMetadata is an organization's metadata: a JSON object, or null. In a
// request, absent, null (clear it) and an object are told apart.
type OrgMetadata struct {
	raw json.RawMessage
	set bool
}

// UnmarshalJSON keeps the object as sent; the schema has checked its shape.
func (m *OrgMetadata) UnmarshalJSON(b []byte) error {
	m.set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		m.raw = nil
		return nil
	}
	m.raw = append(json.RawMessage(nil), b...)
	return nil
}

// MarshalJSON writes the stored object, or null.
func (m OrgMetadata) MarshalJSON() ([]byte, error) {
	if len(m.raw) == 0 {
		return []byte("null"), nil
	}
	return m.raw, nil
}

// Schema documents a free-form object or null.
func (OrgMetadata) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeObject, Nullable: true, AdditionalProperties: true,
		Description: "Free-form JSON object of at most 8 KiB, or null. Always an object here, never Better Auth's JSON string."}
}

// OrgMetadataOf is the stored metadata text as the wire shows it.
func OrgMetadataOf(text string) OrgMetadata {
	if text == "" {
		return OrgMetadata{}
	}
	return OrgMetadata{raw: json.RawMessage(text), set: true}
}

// Text is the metadata as the use cases take it: JSON text, or "" for none.
func (m OrgMetadata) Text() string { return string(m.raw) }

// IsSet reports whether the request sent the field (null included).
func (m OrgMetadata) IsSet() bool { return m.set }

// NullableString is a string that may be sent as null, told apart from
// absent: set-active's organizationId (null clears) and update's logo.
type NullableString struct {
	value       string
	set, isNull bool
}

// UnmarshalJSON records whether the value was null.
func (n *NullableString) UnmarshalJSON(b []byte) error {
	n.set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		n.isNull = true
		return nil
	}
	return json.Unmarshal(b, &n.value)
}

// Schema documents a string or null.
func (NullableString) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeString, Nullable: true}
}

// Value is the string sent ("" for null or absent).
func (n NullableString) Value() string { return n.value }

// IsSet reports whether the request sent the field (null included).
func (n NullableString) IsSet() bool { return n.set }

// IsNull reports whether the request sent null.
func (n NullableString) IsNull() bool { return n.isNull }

// OrgMemberUserJSON is the public part of a member's user.
type OrgMemberUserJSON struct {
	ID    string  `json:"id"`
	Name  string  `json:"name" example:"Ada Lovelace"`
	Email string  `json:"email" format:"email" example:"ada@example.com"`
	Image *string `json:"image" nullable:"true" doc:"Avatar URL, or null."`
}

var (
	_ huma.SchemaProvider = OrgMetadata{}
	_ huma.SchemaProvider = NullableString{}
)

// DNSRecordJSON is one DNS record a domain's owner publishes, with what the
// last check observed.
type DNSRecordJSON struct {
	Type          string     `json:"type" enum:"TXT,CNAME" doc:"TXT: the ownership challenge. CNAME: the alias to the service, required when the service is configured with a CNAME target."`
	Name          string     `json:"name" doc:"The fully qualified name to publish the record at, without the trailing dot." example:"_gatehouse-challenge.shop.example.com"`
	Value         string     `json:"value" doc:"The value to publish: for TXT, gatehouse-verification= and the domain's random token (exactly this string, one of the name's TXT records); for CNAME, the target hostname." example:"gatehouse-verification=3kQ9vT2mXcR8pL1sN7bY4wZ6hJ0aE5dF"`
	Required      bool       `json:"required" doc:"Whether the domain is verified only once this record is seen (and fails when it stays missing past the grace period)."`
	Status        string     `json:"status" enum:"unchecked,found,missing,mismatch" doc:"What the last check saw: unchecked (never looked up), found (the expected value), missing (no such record, or the name does not exist), mismatch (records exist at the name, none with the expected value)."`
	Observed      []string   `json:"observed" nullable:"false" doc:"The values the last check saw at the name (at most five, each cut to 255 bytes), for comparing with value; empty when missing or unchecked. A failed lookup (SERVFAIL, timeout) leaves the last observation in place."`
	LastCheckedAt *time.Time `json:"lastCheckedAt" nullable:"true" doc:"When the record was last looked up with an answer; null before the first check."`
}

// DomainJSON is a domain and its DNS records.
type DomainJSON struct {
	ID             string          `json:"id" doc:"The domain's identifier."`
	Hostname       string          `json:"hostname" doc:"The hostname, normalised: lower-case, without a trailing dot, internationalised labels in punycode (xn--)." example:"shop.example.com"`
	OrganizationID *string         `json:"organizationId" nullable:"true" doc:"The organization the domain belongs to, or null."`
	Status         string          `json:"status" enum:"pending,verified,failed" doc:"pending: waiting for every required record to be seen; it turns failed when the verification window ends first. verified: every required record was seen (or an administrator verified it by hand); it turns failed when a required record stays missing longer than the grace period. failed: checked again only when an administrator asks for a recheck."`
	Attempts       int             `json:"attempts" doc:"Unsuccessful checks since the domain became pending, or since a verified domain's required record went missing (a lookup that failed, such as SERVFAIL or a timeout, counts too, and changes nothing else); the delay between checks doubles with each, up to the configured maximum. 0 once verified with every required record in place."`
	LastCheckedAt  *time.Time      `json:"lastCheckedAt" nullable:"true" doc:"When DNS was last looked up with an answer; null before the first check."`
	NextCheckAt    *time.Time      `json:"nextCheckAt" nullable:"true" doc:"When the verifier checks next; null for a failed domain and for one verified by hand."`
	VerifiedAt     *time.Time      `json:"verifiedAt" nullable:"true" doc:"When the domain was last verified; null if never."`
	FailedAt       *time.Time      `json:"failedAt" nullable:"true" doc:"When the domain last failed; null if never."`
	ManualReason   *string         `json:"manualVerificationReason" nullable:"true" doc:"Why a platform administrator marked the domain verified by hand, or null when DNS decides."`
	CreatedAt      time.Time       `json:"createdAt"`
	UpdatedAt      time.Time       `json:"updatedAt"`
	Records        []DNSRecordJSON `json:"records" nullable:"false" doc:"The records to publish, the TXT challenge first."`
}

func DomainJSONOf(d *domain.Domain) DomainJSON {
	out := DomainJSON{ID: string(d.ID()), Hostname: d.Hostname(), Status: string(d.Status()), Attempts: d.Attempts(),
		LastCheckedAt: OptionalTime(d.LastCheckedAt()), NextCheckAt: OptionalTime(d.NextCheckAt()), VerifiedAt: OptionalTime(d.VerifiedAt()),
		FailedAt: OptionalTime(d.FailedAt()), CreatedAt: d.CreatedAt(), UpdatedAt: d.UpdatedAt(), Records: DNSRecordsJSONOf(d.Records())}
	if org := d.OrganizationID(); org != "" {
		s := string(org)
		out.OrganizationID = &s
	}
	if r := d.ManualReason(); r != "" {
		out.ManualReason = &r
	}
	return out
}

func DNSRecordsJSONOf(rs []domain.DNSRecord) []DNSRecordJSON {
	out := make([]DNSRecordJSON, len(rs))
	for i, r := range rs {
		observed := r.Observed
		if observed == nil {
			observed = []string{}
		}
		out[i] = DNSRecordJSON{Type: string(r.Type), Name: r.Name, Value: r.Value, Required: r.Required, Status: string(r.Status),
			Observed: observed, LastCheckedAt: OptionalTime(r.LastCheckedAt)}
	}
	return out
}

// DomainOutput is one domain.
type DomainOutput struct {
	Body DomainJSON
}

func DomainOutputOf(d *domain.Domain) *DomainOutput { return &DomainOutput{Body: DomainJSONOf(d)} }

// ServiceKeyJSON is a service key as administrators see it: never its secret.
type ServiceKeyJSON struct {
	ID         string     `json:"id" example:"0192f5e4-8a4b-7cc1-9a51-0b3c8d9e1f20"`
	Name       string     `json:"name" example:"billing backend"`
	Masked     string     `json:"maskedKey" doc:"The prefix and the last four characters of the newest secret." example:"gh_sk_…x9Qa"`
	Scopes     []string   `json:"scopes" example:"[\"users:read\"]"`
	CreatedBy  string     `json:"createdBy" doc:"user:<id> or cli." example:"cli"`
	CreatedAt  time.Time  `json:"createdAt"`
	ExpiresAt  *time.Time `json:"expiresAt" nullable:"true" doc:"When the key stops working, or null."`
	LastUsedAt *time.Time `json:"lastUsedAt" nullable:"true" doc:"When the key last authenticated a request (written every few seconds), or null."`
	RevokedAt  *time.Time `json:"revokedAt" nullable:"true" doc:"When the key was revoked, or null."`
}

// ServiceKeyJSONOf presents k as administrators see it.
func ServiceKeyJSONOf(k *domain.ServiceKey) ServiceKeyJSON {
	scopes := make([]string, 0, len(k.Scopes()))
	for _, sc := range k.Scopes() {
		scopes = append(scopes, string(sc))
	}
	return ServiceKeyJSON{ID: string(k.ID()), Name: k.Name(), Masked: k.Masked(), Scopes: scopes, CreatedBy: k.CreatedBy(),
		CreatedAt: k.CreatedAt(), ExpiresAt: OptionalTime(k.ExpiresAt()), LastUsedAt: OptionalTime(k.LastUsedAt()), RevokedAt: OptionalTime(k.RevokedAt())}
}
