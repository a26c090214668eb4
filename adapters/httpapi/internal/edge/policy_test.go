package edge

import "testing"

// TestPolicy_Locate: the edge, not the inner layers, decides where a field
// came from: a declared query, path or header parameter, else the body; a
// location the edge wrote itself is kept.
func TestPolicy_Locate(t *testing.T) {
	p := Policy{Inputs: map[string]string{"limit": "query", "id": "path", "x-api-key": "header"}}
	for field, want := range map[string]string{
		"email":             "body.email",
		"verify.reason":     "body.verify.reason",
		"redirectUris[1]":   "body.redirectUris[1]",
		"":                  "body",
		"limit":             "query.limit",
		"id":                "path.id",
		"x-api-key":         "header.x-api-key",
		"body.email":        "body.email",
		"query.filterValue": "query.filterValue",
		"body":              "body",
	} {
		if got := p.Locate(field); got != want {
			t.Errorf("Locate(%q) = %q, want %q", field, got, want)
		}
	}
	if got := (Policy{}).Locate("limit"); got != "body.limit" {
		t.Errorf("without declared inputs Locate(limit) = %q, want body.limit", got)
	}
}
