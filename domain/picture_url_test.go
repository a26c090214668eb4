package domain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

func TestUser_SetImage(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	u, err := domain.NewUser("u1", "Ada", "ada@example.com", now)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		"":                                  "",
		"  https://cdn.example/a.png  ":     "https://cdn.example/a.png",
		"http://cdn.example:8080/a.png?s=1": "http://cdn.example:8080/a.png?s=1",
		"HTTPS://cdn.example/a.png":         "HTTPS://cdn.example/a.png",
	} {
		if err := u.SetImage(in, now); err != nil || u.Image() != want {
			t.Errorf("SetImage(%q) = %v, image %q; want %q", in, err, u.Image(), want)
		}
	}
	for _, in := range []string{"javascript:alert(1)", "data:image/png;base64,AAAA", "/a.png", "//cdn.example/a.png", "cdn.example/a.png",
		"https://u:p@cdn.example/a.png", "https://cdn.example/a b.png", "https://cdn.example/\u202Egnp.a", "https:///a.png", "ftp://cdn.example/a",
		"https://cdn.example/" + strings.Repeat("a", 2048), "https://cdn.example/a\x00"} {
		var de *domain.Error
		err := u.SetImage(in, now)
		if !asError(err, &de) || de.Code != domain.CodeUserInvalidImage || len(de.Fields) != 1 || de.Fields[0].Field != "image" {
			t.Errorf("SetImage(%q) = %v, want %s naming image", in, err, domain.CodeUserInvalidImage)
		}
	}
}

func TestOrganization_SetLogo(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := domain.NewOrganization("o1", "Acme", "acme", "javascript:alert(1)", "", now); err == nil {
		t.Fatal("NewOrganization took a javascript: logo")
	}
	o, err := domain.NewOrganization("o1", "Acme", "acme", "https://cdn.example/acme.png", "", now)
	if err != nil || o.Logo() != "https://cdn.example/acme.png" {
		t.Fatalf("NewOrganization = %v, logo %q", err, o.Logo())
	}
	var de *domain.Error
	if err := o.SetLogo("data:image/svg+xml,<svg/>", now); !asError(err, &de) || de.Code != "organization.invalid_logo" || de.Fields[0].Field != "logo" {
		t.Fatalf("SetLogo(data:) = %v", err)
	}
}

func TestNames_refuse_bidi_controls(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	u, _ := domain.NewUser("u1", "Ada", "ada@example.com", now)
	o, _ := domain.NewOrganization("o1", "Acme", "acme", "", "", now)
	for _, r := range []rune{0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C} {
		name := "Ad" + string(r) + "a"
		if !domain.IsBidiControl(r) {
			t.Errorf("IsBidiControl(%U) = false", r)
		}
		if err := u.Rename(name, now); err == nil {
			t.Errorf("User.Rename took %U", r)
		}
		if err := o.Rename(name, now); err == nil {
			t.Errorf("Organization.Rename took %U", r)
		}
		if err := u.Ban(name, time.Time{}, now); err == nil {
			t.Errorf("Ban took a reason with %U", r)
		}
		if _, err := domain.NewServiceKey("k1", name, []domain.Scope{domain.ScopeAll}, "gh_sk_x", "cli", time.Time{}, now); err == nil {
			t.Errorf("NewServiceKey took %U", r)
		}
		if _, err := domain.NormalizeOAuthClientName(name, "name"); err == nil {
			t.Errorf("NormalizeOAuthClientName took %U", r)
		}
		if _, err := domain.NormalizeWebhookDescription(name); err == nil {
			t.Errorf("NormalizeWebhookDescription took %U", r)
		}
	}
	// Right-to-left scripts are names like any other.
	for _, name := range []string{"مريم", "שרה כהן", "Ada \u200D Lovelace"} {
		if err := u.Rename(name, now); err != nil {
			t.Errorf("Rename(%q) = %v", name, err)
		}
	}
	if u.Name() != "Ada \u200D Lovelace" {
		t.Fatalf("name = %q", u.Name())
	}
}
