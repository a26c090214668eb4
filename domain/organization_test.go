package domain

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCheckSlug(t *testing.T) {
	for _, ok := range []string{"a", "acme", "acme-corp", "a1-b2-c3", strings.Repeat("a", 64)} {
		if err := CheckSlug(ok); err != nil {
			t.Errorf("CheckSlug(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "Acme", "-acme", "acme-", "ac--me", "ac me", "acmé", "a/b", strings.Repeat("a", 65)} {
		err := CheckSlug(bad)
		var de *Error
		if !errors.As(err, &de) || de.Kind != KindInvalid || len(de.Fields) != 1 || de.Fields[0].Field != "slug" {
			t.Errorf("CheckSlug(%q) = %v, want an invalid error at body.slug", bad, err)
		}
	}
}

func TestOrganizationFields(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	if _, err := NewOrganization("o1", "Acme", "acme", "", `["not","an","object"]`, now); !errors.Is(err, ErrInvalid) {
		t.Fatalf("array metadata: %v, want invalid", err)
	}
	if _, err := NewOrganization("o1", "Acme", "acme", "", `{"broken":`, now); !errors.Is(err, ErrInvalid) {
		t.Fatalf("broken metadata: %v, want invalid", err)
	}
	if _, err := NewOrganization("o1", "  ", "acme", "", "", now); !errors.Is(err, ErrInvalid) {
		t.Fatalf("blank name: %v, want invalid", err)
	}
	o, err := NewOrganization("o1", " Acme ", "acme", " https://acme.example/logo.png ", `{"plan":"pro"}`, now)
	if err != nil {
		t.Fatal(err)
	}
	if o.Name() != "Acme" || o.Logo() != "https://acme.example/logo.png" || o.Metadata() != `{"plan":"pro"}` {
		t.Fatalf("organization = %q %q %q", o.Name(), o.Logo(), o.Metadata())
	}
}

func TestInvitationLifecycle(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	if _, err := NewInvitation("i1", "o1", "bob@example.com", []OrgRole{"emperor"}, "u1", time.Hour, now); err == nil {
		t.Fatal("an unknown role was accepted")
	}
	inv, err := NewInvitation("i1", "o1", "bob@example.com", []OrgRole{OrgRoleMember}, "u1", 48*time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	if !inv.IsOpen(now) || inv.IsOpen(now.Add(48*time.Hour)) {
		t.Fatal("an invitation must be open for exactly its lifetime")
	}
	if err := inv.Answer(InvitationAccepted, now.Add(48*time.Hour)); !errors.Is(err, ErrInvitationNotOpen) {
		t.Fatalf("answering an expired invitation: %v", err)
	}
	if err := inv.Answer(InvitationRejected, now); err != nil {
		t.Fatal(err)
	}
	if err := inv.Answer(InvitationAccepted, now); !errors.Is(err, ErrInvitationNotOpen) {
		t.Fatalf("answering twice: %v, want INVITATION_NOT_FOUND", err)
	}
	if inv.Status() != InvitationRejected {
		t.Fatalf("status = %s", inv.Status())
	}
}

func TestMemberRoles(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	m, err := NewMember("m1", "o1", "u1", []OrgRole{OrgRoleOwner}, now)
	if err != nil || !m.IsOwner() || !m.Allows(Permissions{"organization": {"delete"}}) {
		t.Fatalf("owner: %v", err)
	}
	if err := m.SetRoles([]OrgRole{"god"}); err == nil {
		t.Fatal("an unknown role was accepted")
	}
	if !m.IsOwner() {
		t.Fatal("a refused SetRoles changed the roles")
	}
	if err := m.SetRoles([]OrgRole{OrgRoleMember}); err != nil || m.IsOwner() || m.Allows(Permissions{"member": {"delete"}}) {
		t.Fatalf("member: %v", err)
	}
}

func TestServiceKey(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	if _, err := ParseScopes([]string{"users:read", "users:delete"}, "scopes"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unknown scope: %v", err)
	}
	if _, err := ParseScopes(nil, "scopes"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("no scopes: %v", err)
	}
	scopes, err := ParseScopes([]string{"users:read", "domains:write", "users:read"}, "scopes")
	if err != nil || len(scopes) != 2 {
		t.Fatalf("ParseScopes = %v, %v", scopes, err)
	}
	secret := ServiceKeyPrefix + strings.Repeat("a", ServiceKeySecretLength-4) + "WXYZ"
	if _, err := NewServiceKey("k1", "ci", scopes, secret, "cli", now, now); !errors.Is(err, ErrInvalid) {
		t.Fatalf("expiry now: %v, want invalid", err)
	}
	k, err := NewServiceKey("k1", " ci ", scopes, secret, "cli", now.Add(time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	if k.Name() != "ci" || k.Masked() != "gh_sk_…WXYZ" {
		t.Fatalf("name %q masked %q", k.Name(), k.Masked())
	}
	if !k.HasScope(ScopeUsersRead) || k.HasScope(ScopeUsersWrite) || !k.HasScope(ScopeDomainsWrite) {
		t.Fatal("scopes are not honoured")
	}
	if !k.IsActive(now) || k.IsActive(now.Add(time.Hour)) {
		t.Fatal("a key must work until its expiry")
	}
	k.Revoke(now)
	if k.IsActive(now) {
		t.Fatal("a revoked key is active")
	}
	all, _ := NewServiceKey("k2", "all", []Scope{ScopeAll}, secret, "cli", time.Time{}, now)
	for _, sc := range Scopes {
		if !all.HasScope(sc) {
			t.Fatalf("* does not grant %s", sc)
		}
	}
	if !(ServiceKeySecret{ExpiresAt: now.Add(time.Minute)}).IsActive(now) || (ServiceKeySecret{ExpiresAt: now}).IsActive(now) {
		t.Fatal("a rotated-out secret must work until its overlap ends")
	}
}

func TestCursorRoundTripAndRefusals(t *testing.T) {
	at := time.Date(2026, 11, 21, 10, 0, 0, 123456000, time.UTC)
	p, ok := ParseCursor(Position{At: at, ID: "m-1~x"}.Cursor())
	if !ok || !p.At.Equal(at) || p.ID != "m-1~x" {
		t.Fatalf("round trip = %+v, %v", p, ok)
	}
	for _, bad := range []string{"", "!!", "bm90LWEtY3Vyc29y", Position{At: at, ID: "a\x00b"}.Cursor(), Position{At: at, ID: ""}.Cursor()} {
		if _, ok := ParseCursor(bad); ok {
			t.Errorf("ParseCursor(%q) accepted", bad)
		}
	}
}
