package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

func TestNewMetadata(t *testing.T) {
	// big is an object of exactly MaxMetadataBytes once compacted.
	big := `{"k":"` + strings.Repeat("x", domain.MaxMetadataBytes-8) + `"}`
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"empty_object", `{}`, `{}`, true},
		{"compacts", "{ \"plan\" : \"pro\",\n \"seats\": [1, 2] }", `{"plan":"pro","seats":[1,2]}`, true},
		{"keeps_key_order", `{"b":1,"a":{"z":true,"y":null}}`, `{"b":1,"a":{"z":true,"y":null}}`, true},
		{"exactly_the_limit", big, big, true},
		{"over_the_limit", `{"k":"` + strings.Repeat("x", domain.MaxMetadataBytes-7) + `"}`, "", false},
		{"spaces_do_not_count", `{"k":   "` + strings.Repeat("x", domain.MaxMetadataBytes-8) + `"}`, big, true},
		{"array_refused", `[1,2]`, "", false},
		{"string_refused", `"text"`, "", false},
		{"null_refused", `null`, "", false},
		{"number_refused", `42`, "", false},
		{"malformed_refused", `{"a":}`, "", false},
		{"two_values_refused", `{} {}`, "", false},
		{"empty_input_refused", ``, "", false},
		{"nul_in_value_refused", `{"a":"x\u0000y"}`, "", false},
		{"nul_in_key_refused", `{"\u0000":1}`, "", false},
		{"escaped_backslash_then_u0000_is_text", `{"a":"\\u0000"}`, `{"a":"\\u0000"}`, true},
		{"invalid_utf8_refused", "{\"a\":\"\xff\"}", "", false},
		{"huge_number_refused", `{"a":1e400}`, "", false},
		{"tiny_number_refused", `{"a":1e-400}`, "", false},
		{"zero_accepted", `{"a":0.0e5}`, `{"a":0.0e5}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := domain.NewMetadata("publicMetadata", []byte(tt.in))
			if tt.ok != (err == nil) {
				t.Fatalf("NewMetadata(%.40q) error = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if err != nil {
				var de *domain.Error
				if !errors.As(err, &de) || de.Kind != domain.KindInvalid || len(de.Fields) != 1 || de.Fields[0].Field != "publicMetadata" {
					t.Fatalf("error = %#v, want invalid at body.publicMetadata", err)
				}
				if strings.Contains(de.Fields[0].Message, tt.in) && tt.in != "" {
					t.Fatalf("the message repeats the value: %q", de.Fields[0].Message)
				}
				return
			}
			if got := m.String(); got != tt.want {
				t.Fatalf("NewMetadata(%.40q) = %.60q, want %.60q", tt.in, got, tt.want)
			}
		})
	}
}

func TestMetadata_zero_is_the_empty_object(t *testing.T) {
	var m domain.Metadata
	if m.String() != "{}" || !m.IsEmpty() || string(m.JSON()) != "{}" {
		t.Fatalf("zero Metadata = %q", m.String())
	}
	e, err := domain.NewMetadata("x", []byte(" { } "))
	if err != nil || e != m {
		t.Fatalf("NewMetadata({}) = %#v, %v; want the zero value", e, err)
	}
	if domain.RehydrateMetadata("") != m || domain.RehydrateMetadata("{}") != m {
		t.Fatal("rehydrated empty metadata is not the zero value")
	}
}

func TestMetadata_Equal_ignores_order_spacing_and_number_spelling(t *testing.T) {
	a, _ := domain.NewMetadata("x", []byte(`{"a":1,"b":[1e2,"x"],"c":{"d":null}}`))
	b := domain.RehydrateMetadata(`{"c": {"d": null}, "b": [100, "x"], "a": 1.0}`)
	if !a.Equal(b) || !b.Equal(a) {
		t.Fatalf("%s and %s should be equal", a, b)
	}
	if b.String() != `{"c":{"d":null},"b":[100,"x"],"a":1.0}` {
		t.Fatalf("RehydrateMetadata did not compact: %s", b)
	}
	c, _ := domain.NewMetadata("x", []byte(`{"a":2}`))
	if a.Equal(c) || c.Equal(domain.Metadata{}) {
		t.Fatal("different objects compare equal")
	}
}

func TestUser_metadata_setters(t *testing.T) {
	baseTime := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	u, err := domain.NewUser("u1", "Ada", "ada@example.com", baseTime)
	if err != nil {
		t.Fatal(err)
	}
	if !u.Metadata().Public.IsEmpty() || !u.Metadata().Private.IsEmpty() {
		t.Fatal("a new user has metadata")
	}
	pub, _ := domain.NewMetadata("publicMetadata", []byte(`{"plan":"pro"}`))
	priv, _ := domain.NewMetadata("privateMetadata", []byte(`{"stripe":"cus_1"}`))
	later := baseTime.Add(time.Minute)
	u.SetPublicMetadata(pub, later)
	u.SetPrivateMetadata(priv, later)
	if got := u.Metadata(); got.Public.String() != `{"plan":"pro"}` || got.Private.String() != `{"stripe":"cus_1"}` || !u.UpdatedAt().Equal(later) {
		t.Fatalf("metadata = %+v, updated %v", got, u.UpdatedAt())
	}
}
