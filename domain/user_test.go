package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

func TestNewEmail(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"lower_cases_and_trims", "  Ada@Example.COM ", "ada@example.com", true},
		{"plus_addressing", "ada+x@example.com", "ada+x@example.com", true},
		{"rejects_display_name", "Ada <ada@example.com>", "", false},
		{"rejects_missing_at", "ada.example.com", "", false},
		{"rejects_dotless_host", "ada@localhost", "", false},
		{"rejects_empty", "", "", false},
		{"rejects_overlong", strings.Repeat("a", 250) + "@example.com", "", false},
		{"rejects_overlong_local_part", strings.Repeat("a", 65) + "@example.com", "", false},
		{"cyrillic_domain", "Иван@Пример.рф", "иван@пример.рф", true},
		{"german_idn", "ada@bücher.de", "ada@bücher.de", true},
		{"decomposed_folds_to_nfc", "ada@bu\u0308cher.de", "ada@bücher.de", true},
		{"punycode_domain", "ada@xn--bcher-kva.de", "ada@xn--bcher-kva.de", true},
		{"japanese_mix", "ada@日本語テキストabc.jp", "ada@日本語テキストabc.jp", true},
		{"korean_mix", "ada@한국abc.kr", "ada@한국abc.kr", true},
		{"greek_label_beside_latin_label", "ada@αβγ.example.com", "ada@αβγ.example.com", true},
		{"rejects_invalid_idna", "ada@exa_mple.com", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := domain.NewEmail(tt.in)
			if tt.ok != (err == nil) {
				t.Fatalf("NewEmail(%q) error = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if err != nil && !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("error kind = %v, want invalid", domain.KindOf(err))
			}
			if string(got) != tt.want {
				t.Fatalf("NewEmail(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// Addresses that could pass for another one are refused with a code of their
// own, located at body.email, and the message never repeats the address.
func TestNewEmail_look_alikes(t *testing.T) {
	tests := []struct {
		name, in, code string
	}{
		{"zero_width_space", "ada\u200b@example.com", domain.CodeEmailInvisible},
		{"zero_width_joiner_in_domain", "ada@exam\u200dple.com", domain.CodeEmailInvisible},
		{"zero_width_non_joiner", "a\u200cda@example.com", domain.CodeEmailInvisible},
		{"word_joiner", "ada@example\u2060.com", domain.CodeEmailInvisible},
		{"byte_order_mark", "\ufeffada@example.com", domain.CodeEmailInvisible},
		{"soft_hyphen", "ad\u00ada@example.com", domain.CodeEmailInvisible},
		{"right_to_left_override", "ada@\u202eexample.com", domain.CodeEmailInvisible},
		{"variation_selector", "ada\ufe0f@example.com", domain.CodeEmailInvisible},
		{"hangul_filler", "ada\u3164@example.com", domain.CodeEmailInvisible},
		{"fullwidth_address", "ａｄａ@ｅｘａｍｐｌｅ.ｃｏｍ", domain.CodeEmailNotNormalized},
		{"fullwidth_at_sign", "ada＠example.com", domain.CodeEmailNotNormalized},
		{"ligature", "ﬁnn@example.com", domain.CodeEmailNotNormalized},
		{"superscript", "ada²@example.com", domain.CodeEmailNotNormalized},
		{"cyrillic_a_in_latin_label", "ada@p\u0430ypal.com", domain.CodeEmailMixedScript},
		{"cyrillic_a_in_punycode", "ada@xn--pypal-4ve.com", domain.CodeEmailMixedScript},
		{"greek_omicron_in_latin_label", "ada@g\u03bfogle.com", domain.CodeEmailMixedScript},
		{"cyrillic_and_greek", "ada@\u0430\u03b2.com", domain.CodeEmailMixedScript},
		{"hangul_and_hiragana", "ada@한あ.jp", domain.CodeEmailMixedScript},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := domain.NewEmail(tt.in)
			var de *domain.Error
			if !errors.As(err, &de) || de.Kind != domain.KindInvalid || de.Code != tt.code {
				t.Fatalf("NewEmail(%q) = %q, %v; want code %s", tt.in, got, err, tt.code)
			}
			if len(de.Fields) != 1 || de.Fields[0].Field != "email" {
				t.Fatalf("fields = %v, want one at body.email", de.Fields)
			}
			if strings.Contains(de.Message+de.Fields[0].Message, "@") {
				t.Fatalf("the error repeats the address: %v", de)
			}
		})
	}
}

func TestNewUser_validates_name(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"trims", "  Ada  ", true},
		{"rejects_blank", "   ", false},
		{"rejects_overlong", strings.Repeat("é", domain.MaxNameLength+1), false},
		{"accepts_max_length_in_characters", strings.Repeat("é", domain.MaxNameLength), true},
		{"rejects_invalid_utf8", "\xff\xfe", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := domain.NewUser("u1", tt.in, "ada@example.com", now)
			if tt.ok != (err == nil) {
				t.Fatalf("NewUser(name=%q) error = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if err == nil && u.Name() != strings.TrimSpace(tt.in) {
				t.Fatalf("Name() = %q", u.Name())
			}
			if err != nil {
				var de *domain.Error
				if !errors.As(err, &de) || len(de.Fields) == 0 || de.Fields[0].Field != "name" {
					t.Fatalf("error does not name body.name: %#v", err)
				}
			}
		})
	}
}

func TestUser_changes_move_updated_at(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	u, err := domain.NewUser("u1", "Ada", "ada@example.com", t0)
	if err != nil {
		t.Fatal(err)
	}
	t1 := t0.Add(time.Minute)
	u.MarkEmailVerified(t1)
	if !u.EmailVerified() || !u.UpdatedAt().Equal(t1) || !u.CreatedAt().Equal(t0) {
		t.Fatalf("verified=%v updated=%v created=%v", u.EmailVerified(), u.UpdatedAt(), u.CreatedAt())
	}
}
