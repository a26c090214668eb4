package conformance

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// RunAuditLog runs the AuditLog contract. newStores must return empty
// repositories sharing one fresh database each time it is called; Audit and
// Users are used.
func RunAuditLog(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s Stores)
	}{
		{"append_then_list_round_trips", testAuditRoundTrip},
		{"duplicate_id_is_conflict", testAuditDuplicateID},
		{"empty_log_lists_nothing", testAuditEmpty},
		{"list_is_newest_first_ties_by_id_descending", testAuditOrder},
		{"each_filter_alone", testAuditFilters},
		{"filters_combine_with_and", testAuditFiltersCombined},
		{"since_is_inclusive_until_exclusive", testAuditTimeRange},
		{"limit_bounds_the_page", testAuditLimit},
		{"cursor_pages_equal_timestamps_exactly_once", testAuditCursorEqualTimes},
		{"cursor_pages_with_filters_and_mixed_times", testAuditCursorFiltered},
		{"entries_outlive_the_users_they_name", testAuditOutlivesUsers},
		{"concurrent_appends_are_all_kept", testAuditAppendParallel},
	}
	for _, tt := range tests {
		t.Run("contract=AuditLog/"+tt.name, func(t *testing.T) {
			tt.fn(t, newStores(t))
		})
	}
}

// auditEntry returns entry id at occurredAt: user u1 banning user u2.
func auditEntry(id string, occurredAt time.Time) domain.AuditEntry {
	return domain.AuditEntry{ID: id, OccurredAt: occurredAt, ActorType: domain.ActorUser, ActorID: "u1",
		Action: "admin.ban-user", TargetType: "user", TargetID: "u2", RequestID: "req-" + id,
		IPAddress: "203.0.113.7", Outcome: domain.OutcomeSuccess}
}

func mustAppend(t *testing.T, log ports.AuditLog, entries ...domain.AuditEntry) {
	t.Helper()
	for _, e := range entries {
		if err := log.Append(context.Background(), e); err != nil {
			t.Fatalf("Append %s: %v", e.ID, err)
		}
	}
}

func mustListAudit(t *testing.T, log ports.AuditLog, q ports.AuditQuery) []domain.AuditEntry {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = 1000
	}
	list, err := log.List(context.Background(), q)
	if err != nil {
		t.Fatalf("List(%+v): %v", q, err)
	}
	return list
}

func auditIDs(list []domain.AuditEntry) []string {
	ids := make([]string, 0, len(list))
	for _, e := range list {
		ids = append(ids, e.ID)
	}
	return ids
}

func assertAuditIDs(t *testing.T, log ports.AuditLog, q ports.AuditQuery, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := auditIDs(mustListAudit(t, log, q)); !slices.Equal(got, want) {
		t.Fatalf("List(%s) = %v, want %v", describeAuditQuery(q), got, want)
	}
}

func describeAuditQuery(q ports.AuditQuery) string {
	s := fmt.Sprintf("actorType=%q actorID=%q action=%q targetType=%q targetID=%q limit=%d",
		q.ActorType, q.ActorID, q.Action, q.TargetType, q.TargetID, q.Limit)
	if !q.Since.IsZero() {
		s += " since=" + q.Since.Format(time.RFC3339Nano)
	}
	if !q.Until.IsZero() {
		s += " until=" + q.Until.Format(time.RFC3339Nano)
	}
	if q.After != nil {
		s += fmt.Sprintf(" after=(%s, %s)", q.After.OccurredAt.Format(time.RFC3339Nano), q.After.ID)
	}
	return s
}

// assertSameAudit compares every field, the time as an instant in UTC.
func assertSameAudit(t *testing.T, got, want domain.AuditEntry) {
	t.Helper()
	assertTime(t, "OccurredAt of "+want.ID, got.OccurredAt, want.OccurredAt)
	got.OccurredAt, want.OccurredAt = time.Time{}, time.Time{}
	if got != want {
		t.Fatalf("audit entry mismatch:\n got  %+v\n want %+v", got, want)
	}
}

func testAuditRoundTrip(t *testing.T, s Stores) {
	// A non-UTC instant with nanoseconds comes back as the same instant at
	// microsecond precision, in UTC.
	local := time.Date(2026, 7, 8, 9, 10, 11, 654321987, time.FixedZone("UTC+5:30", 5*60*60+30*60))
	full := domain.AuditEntry{ID: "a1", OccurredAt: local, ActorType: domain.ActorServiceKey, ActorID: "sk_1",
		Action: "service-key.create", TargetType: "service_key", TargetID: "sk_2", RequestID: "req-42",
		IPAddress: "2001:db8::1", Outcome: domain.OutcomeDenied, Code: "FORBIDDEN", ImpersonatorID: "admin_1"}
	bare := domain.AuditEntry{ID: "a2", OccurredAt: local.Add(-time.Second), ActorType: domain.ActorCLI,
		Action: "service-key.revoke", Outcome: domain.OutcomeSuccess}
	mustAppend(t, s.Audit, full, bare)

	list := mustListAudit(t, s.Audit, ports.AuditQuery{})
	if len(list) != 2 {
		t.Fatalf("List = %d entries, want 2", len(list))
	}
	want := full
	want.OccurredAt = local.Truncate(time.Microsecond)
	assertSameAudit(t, list[0], want)
	bare.OccurredAt = bare.OccurredAt.Truncate(time.Microsecond)
	assertSameAudit(t, list[1], bare)
	// The returned slice is the caller's.
	list[0].Action = "tampered"
	assertSameAudit(t, mustListAudit(t, s.Audit, ports.AuditQuery{})[0], want)
}

func testAuditDuplicateID(t *testing.T, s Stores) {
	first := auditEntry("a1", baseTime)
	mustAppend(t, s.Audit, first)
	dup := auditEntry("a1", baseTime.Add(time.Hour))
	dup.Action = "admin.delete-user"
	mustBeKind(t, s.Audit.Append(context.Background(), dup), domain.ErrConflict)
	list := mustListAudit(t, s.Audit, ports.AuditQuery{})
	if len(list) != 1 {
		t.Fatalf("List = %v, want the first entry only", auditIDs(list))
	}
	assertSameAudit(t, list[0], first)
}

func testAuditEmpty(t *testing.T, s Stores) {
	assertAuditIDs(t, s.Audit, ports.AuditQuery{})
	assertAuditIDs(t, s.Audit, ports.AuditQuery{ActorID: "u1", After: &ports.AuditCursor{OccurredAt: baseTime, ID: "x"}})
}

func testAuditOrder(t *testing.T, s Stores) {
	mustAppend(t, s.Audit,
		auditEntry("m", baseTime.Add(time.Minute)),
		auditEntry("z", baseTime),
		auditEntry("a", baseTime.Add(time.Hour)),
		auditEntry("b", baseTime.Add(time.Minute)),
		auditEntry("c", baseTime.Add(time.Minute+time.Microsecond)),
	)
	assertAuditIDs(t, s.Audit, ports.AuditQuery{}, "a", "c", "m", "b", "z")
}

// seedAuditFilters appends entries that differ in one field each from e0.
func seedAuditFilters(t *testing.T, s Stores) {
	t.Helper()
	base := auditEntry("e0", baseTime)
	actorType := auditEntry("e1", baseTime.Add(1*time.Second))
	actorType.ActorType = domain.ActorServiceKey
	actorID := auditEntry("e2", baseTime.Add(2*time.Second))
	actorID.ActorID = "u9"
	action := auditEntry("e3", baseTime.Add(3*time.Second))
	action.Action = "admin.unban-user"
	targetType := auditEntry("e4", baseTime.Add(4*time.Second))
	targetType.TargetType = "organization"
	targetID := auditEntry("e5", baseTime.Add(5*time.Second))
	targetID.TargetID = "u3"
	mustAppend(t, s.Audit, base, actorType, actorID, action, targetType, targetID)
}

func testAuditFilters(t *testing.T, s Stores) {
	seedAuditFilters(t, s)
	tests := []struct {
		name string
		q    ports.AuditQuery
		want []string
	}{
		{"none", ports.AuditQuery{}, []string{"e5", "e4", "e3", "e2", "e1", "e0"}},
		{"actor_type", ports.AuditQuery{ActorType: domain.ActorServiceKey}, []string{"e1"}},
		{"actor_type_other", ports.AuditQuery{ActorType: domain.ActorUser}, []string{"e5", "e4", "e3", "e2", "e0"}},
		{"actor_id", ports.AuditQuery{ActorID: "u9"}, []string{"e2"}},
		{"action", ports.AuditQuery{Action: "admin.unban-user"}, []string{"e3"}},
		{"target_type", ports.AuditQuery{TargetType: "organization"}, []string{"e4"}},
		{"target_id", ports.AuditQuery{TargetID: "u3"}, []string{"e5"}},
		{"no_match", ports.AuditQuery{ActorID: "nobody"}, nil},
		// A filter matches whole values only.
		{"no_prefix_match", ports.AuditQuery{Action: "admin."}, nil},
		{"no_case_folding", ports.AuditQuery{ActorID: "U9"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assertAuditIDs(t, s.Audit, tt.q, tt.want...) })
	}
}

func testAuditFiltersCombined(t *testing.T, s Stores) {
	seedAuditFilters(t, s)
	extra := auditEntry("e6", baseTime.Add(6*time.Second))
	extra.ActorID, extra.Action = "u9", "admin.unban-user"
	mustAppend(t, s.Audit, extra)
	assertAuditIDs(t, s.Audit, ports.AuditQuery{ActorID: "u9"}, "e6", "e2")
	assertAuditIDs(t, s.Audit, ports.AuditQuery{Action: "admin.unban-user"}, "e6", "e3")
	assertAuditIDs(t, s.Audit, ports.AuditQuery{ActorID: "u9", Action: "admin.unban-user"}, "e6")
	assertAuditIDs(t, s.Audit, ports.AuditQuery{ActorID: "u9", Action: "admin.unban-user", TargetType: "organization"})
	assertAuditIDs(t, s.Audit, ports.AuditQuery{ActorType: domain.ActorUser, ActorID: "u1", Action: "admin.ban-user",
		TargetType: "user", TargetID: "u2"}, "e0")
	assertAuditIDs(t, s.Audit, ports.AuditQuery{ActorID: "u9", Since: baseTime.Add(3 * time.Second)}, "e6")
	assertAuditIDs(t, s.Audit, ports.AuditQuery{ActorID: "u9", Until: baseTime.Add(3 * time.Second)}, "e2")
}

func testAuditTimeRange(t *testing.T, s Stores) {
	for i := range 5 {
		mustAppend(t, s.Audit, auditEntry(fmt.Sprintf("t%d", i), baseTime.Add(time.Duration(i)*time.Minute)))
	}
	zone := time.FixedZone("UTC-7", -7*60*60)
	at := func(i int) time.Time { return baseTime.Add(time.Duration(i) * time.Minute).In(zone) }
	assertAuditIDs(t, s.Audit, ports.AuditQuery{Since: at(1)}, "t4", "t3", "t2", "t1")
	assertAuditIDs(t, s.Audit, ports.AuditQuery{Until: at(3)}, "t2", "t1", "t0")
	assertAuditIDs(t, s.Audit, ports.AuditQuery{Since: at(1), Until: at(3)}, "t2", "t1")
	assertAuditIDs(t, s.Audit, ports.AuditQuery{Since: at(2), Until: at(2)})
	// One microsecond either side of an entry.
	assertAuditIDs(t, s.Audit, ports.AuditQuery{Since: at(2).Add(time.Microsecond), Until: at(3).Add(time.Microsecond)}, "t3")
	assertAuditIDs(t, s.Audit, ports.AuditQuery{Since: at(2).Add(-time.Microsecond), Until: at(2).Add(time.Microsecond)}, "t2")
}

func testAuditLimit(t *testing.T, s Stores) {
	for i := range 5 {
		mustAppend(t, s.Audit, auditEntry(fmt.Sprintf("l%d", i), baseTime.Add(time.Duration(i)*time.Second)))
	}
	assertAuditIDs(t, s.Audit, ports.AuditQuery{Limit: 1}, "l4")
	assertAuditIDs(t, s.Audit, ports.AuditQuery{Limit: 3}, "l4", "l3", "l2")
	assertAuditIDs(t, s.Audit, ports.AuditQuery{Limit: 5}, "l4", "l3", "l2", "l1", "l0")
	assertAuditIDs(t, s.Audit, ports.AuditQuery{Limit: 1000}, "l4", "l3", "l2", "l1", "l0")
}

// pageAudit lists every page of q, each of size limit, continuing from the
// last entry of the one before, and fails if a page is not full before the
// end.
func pageAudit(t *testing.T, log ports.AuditLog, q ports.AuditQuery, limit int) []string {
	t.Helper()
	q.Limit = limit
	var all []string
	for range 100 {
		page := mustListAudit(t, log, q)
		all = append(all, auditIDs(page)...)
		if len(page) < limit {
			return all
		}
		last := page[len(page)-1]
		q.After = &ports.AuditCursor{OccurredAt: last.OccurredAt, ID: last.ID}
	}
	t.Fatal("paging did not end")
	return nil
}

func testAuditCursorEqualTimes(t *testing.T, s Stores) {
	const n = 25
	// Appended in a scrambled order, all at one instant: only the ids order
	// them, and the cursor must rely on the id to move on.
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("e%02d", i))
	}
	for i := range n {
		mustAppend(t, s.Audit, auditEntry(want[(i*7)%n], baseTime))
	}
	slices.Reverse(want)
	for _, limit := range []int{1, 4, 7, 25, 26} {
		if got := pageAudit(t, s.Audit, ports.AuditQuery{}, limit); !slices.Equal(got, want) {
			t.Fatalf("pages of %d = %v, want each entry once: %v", limit, got, want)
		}
	}
	// The cursor's time is an instant: another zone reads the same page.
	after := &ports.AuditCursor{OccurredAt: baseTime.In(time.FixedZone("UTC+9", 9*60*60)), ID: "e10"}
	assertAuditIDs(t, s.Audit, ports.AuditQuery{After: after, Limit: 3}, "e09", "e08", "e07")
}

func testAuditCursorFiltered(t *testing.T, s Stores) {
	var want []string
	for i := range 30 {
		e := auditEntry(fmt.Sprintf("f%02d", i), baseTime.Add(time.Duration(i/4)*time.Second))
		if i%3 == 0 {
			e.ActorID = "u7"
			want = append(want, e.ID)
		}
		mustAppend(t, s.Audit, e)
	}
	slices.Reverse(want)
	if got := pageAudit(t, s.Audit, ports.AuditQuery{ActorID: "u7"}, 3); !slices.Equal(got, want) {
		t.Fatalf("filtered pages = %v, want %v", got, want)
	}
	// A cursor older than every entry, and one newer than every entry.
	assertAuditIDs(t, s.Audit, ports.AuditQuery{After: &ports.AuditCursor{OccurredAt: baseTime, ID: "f00"}})
	all := pageAudit(t, s.Audit, ports.AuditQuery{After: &ports.AuditCursor{OccurredAt: baseTime.Add(time.Hour), ID: ""}}, 1000)
	if len(all) != 30 {
		t.Fatalf("after a cursor newer than every entry: %d entries, want 30", len(all))
	}
	// The cursor and the time range combine: the entries of second 2 (f08
	// to f11) older than f10.
	assertAuditIDs(t, s.Audit, ports.AuditQuery{Since: baseTime.Add(2 * time.Second), Until: baseTime.Add(3 * time.Second),
		After: &ports.AuditCursor{OccurredAt: baseTime.Add(2 * time.Second), ID: "f10"}}, "f09", "f08")
}

func testAuditOutlivesUsers(t *testing.T, s Stores) {
	// Entries name users that never existed, and users that are deleted.
	mustAppend(t, s.Audit, auditEntry("ghost", baseTime))
	mustCreateUsers(t, s, "u1", "u2")
	mustAppend(t, s.Audit, auditEntry("real", baseTime.Add(time.Second)))
	mustDeleteUser(t, s, "u2")
	mustDeleteUser(t, s, "u1")
	assertAuditIDs(t, s.Audit, ports.AuditQuery{ActorID: "u1"}, "real", "ghost")
	assertAuditIDs(t, s.Audit, ports.AuditQuery{TargetID: "u2"}, "real", "ghost")
}

func testAuditAppendParallel(t *testing.T, s Stores) {
	const workers = 20
	errs := runParallel(workers, func(i int) error {
		return s.Audit.Append(context.Background(), auditEntry(fmt.Sprintf("p%02d", i), baseTime))
	})
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Append: %v", err)
		}
	}
	if got := mustListAudit(t, s.Audit, ports.AuditQuery{}); len(got) != workers {
		t.Fatalf("List = %d entries after %d concurrent appends, want all", len(got), workers)
	}
}
