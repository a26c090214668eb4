package harness

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
)

// AuditPath is the audit log's route.
const AuditPath = "/api/admin/audit-log"

// AuditPage reads one page of the audit log with query q and returns its
// entries and next cursor ("" on the last page).
func AuditPage(t testing.TB, admin *Client, q url.Values) ([]map[string]any, string) {
	t.Helper()
	r := admin.Get(AuditPath + "?" + q.Encode())
	var page struct {
		Data       []map[string]any `json:"data"`
		NextCursor *string          `json:"nextCursor"`
	}
	MustStatus(t, r, http.StatusOK)
	MustUnmarshal(t, r.Body, &page)
	if page.Data == nil {
		t.Fatalf("audit log page without data: %s", r.Body)
	}
	if page.NextCursor == nil {
		return page.Data, ""
	}
	if *page.NextCursor == "" {
		t.Fatalf("empty nextCursor: %s", r.Body)
	}
	return page.Data, *page.NextCursor
}

// AuditAll reads every entry matching q, one page of up to 100.
func AuditAll(t testing.TB, admin *Client, q url.Values) []map[string]any {
	t.Helper()
	q = cloneValues(q)
	q.Set("limit", "100")
	entries, next := AuditPage(t, admin, q)
	if next != "" {
		t.Fatalf("more than 100 entries match %v", q)
	}
	return entries
}

func cloneValues(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = slices.Clone(v)
	}
	return out
}
