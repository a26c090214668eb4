package domain_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/domain"
)

func TestPasswordPolicy_Check(t *testing.T) {
	p := domain.PasswordPolicy{MinLength: 8, MaxLength: 128}
	blocked := func(s string) bool { return s == "password1" }
	tests := []struct {
		name, password, code string
	}{
		{"seven_characters_too_short", "abcdefg", domain.CodePasswordTooShort},
		{"eight_characters_accepted", "abcdefgh", ""},
		{"length_counts_characters_not_bytes", "äöüßäöü", domain.CodePasswordTooShort},
		{"multibyte_eight_characters_accepted", "äöüßäöüß", ""},
		{"max_length_accepted", strings.Repeat("x", 128), ""},
		{"over_max_too_long", strings.Repeat("x", 129), domain.CodePasswordTooLong},
		{"blocklisted_case_insensitive", "PassWord1", domain.CodePasswordTooCommon},
		{"the_address_itself", "Ada@Example.com", domain.CodePasswordTooCommon},
		{"passphrase_with_spaces_accepted", "correct horse battery staple", ""},
		{"invalid_utf8_refused", "abcdefgh\xff", "password.invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := p.Check("password", tt.password, blocked, "ada@example.com", "ada")
			if tt.code == "" {
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				return
			}
			var de *domain.Error
			if !errors.As(err, &de) || de.Code != tt.code || de.Kind != domain.KindInvalid {
				t.Fatalf("err = %v, want %s", err, tt.code)
			}
			if len(de.Fields) != 1 || de.Fields[0].Field != "password" || strings.Contains(de.Error(), tt.password) {
				t.Fatalf("fields = %+v; the error must name the field and never repeat the password", de.Fields)
			}
		})
	}
}
