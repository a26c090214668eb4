package domain

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxMetadataBytes bounds one metadata object, serialised without spaces.
const MaxMetadataBytes = 8 << 10

// Metadata is a JSON object that a trusted backend keeps on a user for its
// own use. The zero value is the empty object.
type Metadata struct {
	raw string // compact JSON object; "" stands for {}
}

// UserMetadata is a user's two metadata objects: the public one, which a
// backend may show the user, and the private one, which only backends see.
// Neither appears in the framework's user object.
type UserMetadata struct {
	Public  Metadata
	Private Metadata
}

// NewMetadata validates and compacts raw, a serialised JSON object, for the
// request field named location (such as publicMetadata). It refuses
// anything else (arrays, strings, null, malformed JSON), an object over
// MaxMetadataBytes once compacted, and what not every store can keep: text
// that is not UTF-8, the NUL character (PostgreSQL's jsonb refuses it) and
// numbers that do not fit a double.
func NewMetadata(location string, raw []byte) (Metadata, error) {
	bad := func(msg string) error {
		return Invalid("user.invalid_metadata", "Invalid metadata", FieldViolation{Field: location, Message: msg})
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil || buf.Len() == 0 || buf.Bytes()[0] != '{' {
		return Metadata{}, bad("must be a JSON object")
	}
	if buf.Len() > MaxMetadataBytes {
		return Metadata{}, bad("must be at most " + strconv.Itoa(MaxMetadataBytes) + " bytes serialised")
	}
	if !utf8.Valid(buf.Bytes()) {
		return Metadata{}, bad("must be valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return Metadata{}, bad("must be a JSON object")
	}
	if msg := unstorableJSON(v); msg != "" {
		return Metadata{}, bad(msg)
	}
	if buf.String() == "{}" {
		return Metadata{}, nil
	}
	return Metadata{raw: buf.String()}, nil
}

// unstorableJSON returns why a decoded JSON value cannot be stored
// everywhere, or "".
func unstorableJSON(v any) string {
	switch v := v.(type) {
	case string:
		if strings.ContainsRune(v, 0) {
			return "must not contain the NUL character"
		}
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || (f == 0 && strings.ContainsAny(strings.SplitN(strings.ToLower(string(v)), "e", 2)[0], "123456789")) {
			return "numbers must fit a double"
		}
	case []any:
		for _, e := range v {
			if msg := unstorableJSON(e); msg != "" {
				return msg
			}
		}
	case map[string]any:
		for k, e := range v {
			if msg := unstorableJSON(k); msg != "" {
				return msg
			}
			if msg := unstorableJSON(e); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// RehydrateMetadata rebuilds stored metadata. Only storage adapters call
// it; it does not validate, but compacts what a store may have spaced out
// (PostgreSQL writes jsonb with spaces).
func RehydrateMetadata(raw string) Metadata {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(raw)); err == nil {
		raw = buf.String()
	}
	if raw == "{}" {
		raw = ""
	}
	return Metadata{raw: raw}
}

// String returns the object serialised, "{}" when empty.
func (m Metadata) String() string {
	if m.raw == "" {
		return "{}"
	}
	return m.raw
}

// JSON returns the object serialised, as a fresh slice.
func (m Metadata) JSON() json.RawMessage { return json.RawMessage(m.String()) }

// IsEmpty reports whether m is the empty object.
func (m Metadata) IsEmpty() bool { return m.raw == "" }

// Equal reports whether m and o hold the same object: the same keys and
// values, whatever their order, spacing or the spelling of their numbers
// (stores may normalise any of these).
func (m Metadata) Equal(o Metadata) bool {
	if m.raw == o.raw {
		return true
	}
	var a, b any
	if json.Unmarshal([]byte(m.String()), &a) != nil || json.Unmarshal([]byte(o.String()), &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}
