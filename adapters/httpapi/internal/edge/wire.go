package edge

import (
	"bytes"
	"encoding/json"

	"github.com/danielgtaylor/huma/v2"
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
