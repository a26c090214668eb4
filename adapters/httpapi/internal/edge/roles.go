package edge

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// RoleInput is a role list as Better Auth's plugins accept it: one string
// (possibly comma-separated) or an array of strings.
type RoleInput []string

// UnmarshalJSON accepts "admin", "user,admin" or ["user", "admin"].
func (r *RoleInput) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*r = nil
		for part := range strings.SplitSeq(one, ",") {
			*r = append(*r, strings.TrimSpace(part))
		}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("role must be a string or an array of strings")
	}
	*r = many
	return nil
}

// Schema documents the two accepted shapes.
func (RoleInput) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{
		Description: "A role, several comma-separated, or an array of roles.",
		OneOf: []*huma.Schema{
			{Type: huma.TypeString, MinLength: new(1), MaxLength: new(256)},
			{Type: huma.TypeArray, MinItems: new(1), MaxItems: new(16), Items: &huma.Schema{Type: huma.TypeString, MinLength: new(1), MaxLength: new(64)}},
		},
	}
}

var _ huma.SchemaProvider = RoleInput(nil)

// PermissionsInput is a {resource: [actions]} request.
type PermissionsInput map[string][]string

// Schema documents the object.
func (PermissionsInput) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{
		Type:                 huma.TypeObject,
		Description:          "Actions per resource, such as {\"user\": [\"ban\"]}. Every action must be granted.",
		AdditionalProperties: &huma.Schema{Type: huma.TypeArray, MaxItems: new(32), Items: &huma.Schema{Type: huma.TypeString, MaxLength: new(64)}},
		MaxProperties:        new(16),
	}
}

var _ huma.SchemaProvider = PermissionsInput(nil)
