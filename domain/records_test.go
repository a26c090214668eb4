package domain_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// Ensure a record's constructor returns a checked copy and leaves the value
// it was given as it was: the provider's defaults and trims, and a revision
// that keeps the creation time.
func TestIdentityProvider_constructors_return_a_new_value(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	in := domain.IdentityProvider{ID: "acme", Preset: domain.PresetGitHub, Name: "  Acme  ", ClientID: " client ",
		SealedClientSecret: []byte("sealed"), Scopes: []string{" read:user ", "read:user"}}
	before := in
	before.Scopes = append([]string(nil), in.Scopes...)
	p, err := domain.NewIdentityProvider(in, created)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, before) {
		t.Fatalf("NewIdentityProvider changed its argument: %+v, was %+v", in, before)
	}
	if p.Name != "Acme" || p.ClientID != "client" || !reflect.DeepEqual(p.Scopes, []string{"read:user"}) || p.Endpoints.API != "https://api.github.com" {
		t.Fatalf("checked provider = %+v", p)
	}

	later := created.Add(time.Hour)
	changed := p
	changed.Name = ""
	revised, err := domain.ReviseIdentityProvider(changed, later)
	if err != nil {
		t.Fatal(err)
	}
	if changed.Name != "" || !changed.UpdatedAt.Equal(p.UpdatedAt) {
		t.Fatalf("ReviseIdentityProvider changed its argument: %+v", changed)
	}
	if revised.Name != "GitHub" || !revised.CreatedAt.Equal(p.CreatedAt) || !revised.UpdatedAt.Equal(later) {
		t.Fatalf("revised provider = %+v", revised)
	}

	bad := p
	bad.ClientID = ""
	if _, err := domain.ReviseIdentityProvider(bad, later); codeOf(err) != "identity_provider.invalid" {
		t.Fatalf("a provider without client id: %v", err)
	}
}

// Ensure an endpoint's change is checked into a copy: the endpoint it was
// made from keeps its fields, whether the change is accepted or refused.
func TestWebhookEndpoint_Changed_returns_a_new_value(t *testing.T) {
	e := domain.WebhookEndpoint{ID: "wh_1", URL: "https://example.com/old", Description: "old", Enabled: true}
	url, desc, types := "https://example.com/new", "  new  ", []string{"user.created", "user.created"}
	got, err := e.Changed(domain.WebhookEndpointChange{URL: &url, Description: &desc, EventTypes: &types})
	if err != nil {
		t.Fatal(err)
	}
	if got.URL != url || got.Description != "new" || !reflect.DeepEqual(got.EventTypes, []domain.EventType{domain.EventUserCreated}) {
		t.Fatalf("changed endpoint = %+v", got)
	}
	if e.URL != "https://example.com/old" || e.Description != "old" || e.EventTypes != nil {
		t.Fatalf("Changed changed its receiver: %+v", e)
	}
	bad := "http://example.com/plain"
	if _, err := e.Changed(domain.WebhookEndpointChange{URL: &bad}); codeOf(err) != "webhook.invalid" {
		t.Fatalf("an http URL: %v", err)
	}
}

// codeOf returns the code of err's domain error, or "".
func codeOf(err error) string {
	var de *domain.Error
	if errors.As(err, &de) {
		return de.Code
	}
	return ""
}
