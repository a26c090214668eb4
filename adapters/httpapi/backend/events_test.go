package backend_test

import (
	"encoding/json"
	"maps"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/gatehouse/gatehouse/adapters/httpapi/backend"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// goldenBackend is the trusted API's published contract.
const goldenBackend = "../../../test/contracts/testdata/openapi/backend.json"

// eventContract is the trusted contract with, beside its own schemas, the
// schema of every event's data type it does not publish yet (generated from
// the Go type, as the contract's are). Each event's data is checked against
// the contract's schema of its type when it has one.
func eventContract(t *testing.T) *openapi3.T {
	t.Helper()
	raw, err := os.ReadFile(goldenBackend)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	reg := huma.NewMapRegistry("#/components/schemas/", huma.DefaultSchemaNamer)
	for _, v := range backend.EventSchemas() {
		reg.Schema(reflect.TypeOf(v), true, "")
	}
	for name, s := range reg.Map() {
		if _, published := schemas[name]; published {
			continue
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		schemas[name] = m
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatalf("contract with the event schemas does not load: %v", err)
	}
	return loaded
}

var eventTime = time.Date(2026, 11, 21, 10, 0, 0, 123456000, time.UTC)

// eventSamples is a data value of every event, each with every optional
// part set, so that the whole object is checked.
func eventSamples(t *testing.T) map[domain.EventType]any {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	u, err := domain.NewUser("u1", "Ada Lovelace", "ada@example.com", eventTime)
	must(err)
	u.SetImage("https://example.com/ada.png", eventTime)
	u.MarkEmailVerified(eventTime)
	meta, err := domain.NewMetadata("publicMetadata", []byte(`{"plan":"pro","seats":3}`))
	must(err)
	u.SetPublicMetadata(meta, eventTime)
	u.SetTwoFactorEnabled(true, eventTime)
	must(u.Ban("spam", eventTime.Add(time.Hour), eventTime))
	linked, err := domain.NewLinkedAccount(domain.LinkedAccount{ID: "la1", UserID: "u1", ProviderID: "google", Subject: "1234",
		Email: "ada@example.com", Scopes: []string{"openid"}, SealedTokens: []byte("sealed")}, eventTime)
	must(err)
	user := ports.UserEventData{User: u, Passkeys: 2, LinkedAccounts: []domain.LinkedAccount{linked}}

	s := domain.NewImpersonationSession("s1", "u1", "admin1", "hash", "203.0.113.7", "Mozilla/5.0", time.Hour, eventTime)
	org, err := domain.NewOrganization("o1", "Acme", "acme", "https://example.com/acme.png", `{"tier":"gold"}`, eventTime)
	must(err)
	m, err := domain.NewMember("m1", "o1", "u1", []domain.OrgRole{domain.OrgRoleAdmin, domain.OrgRoleMember}, eventTime)
	must(err)
	inv, err := domain.NewInvitation("i1", "o1", "bob@example.com", []domain.OrgRole{domain.OrgRoleMember}, "u1", time.Hour, eventTime)
	must(err)
	d := domain.NewDomain("d1", "shop.example.com", "o1", "token", "edge.example.net", eventTime)
	key, err := domain.NewServiceKey("k1", "backend", []domain.Scope{domain.ScopeUsersRead}, "gh_sk_0123456789abcdefghijklmnopqrstuv", "cli",
		eventTime.Add(24*time.Hour), eventTime)
	must(err)

	userData, orgData, member := any(user), any(ports.OrganizationWithCount{Organization: org, MemberCount: 3}), any(ports.MemberWithUser{Member: m, User: u})
	factor := domain.FactorChange{UserID: "u1", Factor: "passkey", PasskeyID: "AQID"}
	return map[domain.EventType]any{
		domain.EventUserCreated: userData, domain.EventUserUpdated: userData, domain.EventUserDeleted: userData,
		domain.EventUserBanned: userData, domain.EventUserUnbanned: userData,
		domain.EventSessionCreated: s, domain.EventSessionRevoked: s,
		domain.EventOrganizationCreated: orgData, domain.EventOrganizationUpdated: orgData, domain.EventOrganizationDeleted: orgData,
		domain.EventMemberAdded: member, domain.EventMemberRoleChanged: member, domain.EventMemberRemoved: member,
		domain.EventInvitationCreated: inv, domain.EventInvitationAccepted: inv, domain.EventInvitationRejected: inv, domain.EventInvitationCanceled: inv,
		domain.EventDomainCreated: d, domain.EventDomainVerified: d, domain.EventDomainFailed: d, domain.EventDomainDeleted: d,
		domain.EventServiceKeyCreated: key, domain.EventServiceKeyRevoked: key,
		domain.EventFactorEnabled: factor, domain.EventFactorDisabled: domain.FactorChange{UserID: "u1", Factor: "totp"},
		domain.EventAccountLinked: linked, domain.EventAccountUnlinked: linked,
	}
}

// Ensure every event of the catalogue encodes as {type, timestamp, data},
// its data valid against the trusted contract's schema of its type, and
// never carrying a secret.
func TestEventEncoder_encodes_every_event_as_the_contract_shows_it(t *testing.T) {
	doc, samples, schemas := eventContract(t), eventSamples(t), backend.EventSchemas()
	if len(schemas) != len(domain.EventTypes) {
		t.Fatalf("EventSchemas has %d events, the catalogue %d", len(schemas), len(domain.EventTypes))
	}
	enc := backend.NewEventEncoder()
	for _, et := range domain.EventTypes {
		t.Run(string(et), func(t *testing.T) {
			want, ok := schemas[et]
			if !ok {
				t.Fatalf("EventSchemas lacks %s", et)
			}
			b, err := enc.Encode(ports.Event{ID: "msg_1", Type: et, OccurredAt: eventTime.In(time.FixedZone("CET", 3600)), Data: samples[et]})
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, []string{"data", "timestamp", "type"}) {
				t.Fatalf("payload keys = %v", keys)
			}
			if got["type"] != string(et) {
				t.Errorf("type = %v, want %s", got["type"], et)
			}
			if ts, _ := got["timestamp"].(string); ts != "2026-11-21T10:00:00.123456Z" {
				t.Errorf("timestamp = %v, want the time in UTC, RFC 3339", got["timestamp"])
			}
			name := reflect.TypeOf(want).Name()
			s := doc.Components.Schemas[name]
			if s == nil {
				t.Fatalf("no schema %s", name)
			}
			if err := s.Value.VisitJSON(got["data"]); err != nil {
				t.Errorf("data does not match schema %s: %v\n%s", name, err, b)
			}
			for _, secret := range []string{"sealed", "hash", "token", "gh_sk_0123"} {
				if containsValue(got["data"], secret) {
					t.Errorf("data carries %q: %s", secret, b)
				}
			}
		})
	}
}

// Ensure an event whose data is not its type's, or outside the catalogue,
// is refused as an internal error rather than sent malformed.
func TestEventEncoder_refuses_data_of_another_type(t *testing.T) {
	enc := backend.NewEventEncoder()
	samples := eventSamples(t)
	for _, e := range []ports.Event{
		{Type: domain.EventUserCreated, Data: samples[domain.EventSessionCreated]},
		{Type: domain.EventDomainVerified, Data: samples[domain.EventOrganizationCreated]},
		{Type: "user.exploded", Data: samples[domain.EventUserCreated]},
		{Type: domain.EventFactorEnabled, Data: "totp"},
	} {
		if _, err := enc.Encode(e); domain.KindOf(err) != domain.KindInternal {
			t.Errorf("Encode(%s, %T) = %v, want an internal error", e.Type, e.Data, err)
		}
	}
}

// containsValue reports whether a string value of v (at any depth) equals s.
func containsValue(v any, s string) bool {
	switch x := v.(type) {
	case string:
		return x == s
	case map[string]any:
		for _, e := range x {
			if containsValue(e, s) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if containsValue(e, s) {
				return true
			}
		}
	}
	return false
}
