package ports_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Ensure every store's page checks refuse exactly what the ports document,
// naming the field as the edge shows it.
func TestQueryValidation(t *testing.T) {
	after := &ports.MemberCursor{ID: "m1"}
	tests := []struct {
		name     string
		err      error
		location string // "" when the query is fine
	}{
		{"organization_limit_0", ports.OrganizationQuery{Limit: 0}.Validate(), "limit"},
		{"organization_limit_1001", ports.OrganizationQuery{Limit: ports.MaxOrganizationPage + 1}.Validate(), "limit"},
		{"organization_limit_1000", ports.OrganizationQuery{Limit: ports.MaxOrganizationPage}.Validate(), ""},
		{"member_limit_0", ports.MemberQuery{Limit: 0}.Validate(), "limit"},
		{"member_limit_1001", ports.MemberQuery{Limit: ports.MaxMemberPage + 1}.Validate(), "limit"},
		{"member_negative_offset", ports.MemberQuery{Limit: 10, Offset: -1}.Validate(), "offset"},
		{"member_offset_with_cursor", ports.MemberQuery{Limit: 10, Offset: 1, After: after}.Validate(), "offset"},
		{"member_cursor", ports.MemberQuery{Limit: 10, After: after}.Validate(), ""},
		{"member_offset", ports.MemberQuery{Limit: 1000, Offset: 5}.Validate(), ""},
		{"domain_limit_0", ports.DomainQuery{Limit: 0}.Validate(), "limit"},
		{"domain_limit_1000", ports.DomainQuery{Limit: ports.MaxDomainPage}.Validate(), ""},
		{"due_batch_0", ports.ValidateDueBatch(0, time.Minute), "limit"},
		{"due_batch_1001", ports.ValidateDueBatch(ports.MaxDueBatch+1, time.Minute), "limit"},
		{"due_lease_0", ports.ValidateDueBatch(1, 0), "lease"},
		{"due_lease_under_a_millisecond", ports.ValidateDueBatch(1, time.Millisecond-1), "lease"},
		{"due_batch_1", ports.ValidateDueBatch(1, time.Millisecond), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.location == "" {
				if tt.err != nil {
					t.Fatalf("error = %v, want none", tt.err)
				}
				return
			}
			var de *domain.Error
			if !errors.As(tt.err, &de) || de.Kind != domain.KindInvalid {
				t.Fatalf("error = %v, want kind invalid", tt.err)
			}
			if len(de.Fields) != 1 || de.Fields[0].Field != tt.location {
				t.Fatalf("fields = %+v, want one at %s", de.Fields, tt.location)
			}
		})
	}
}

// Ensure user pages are refused outside 1 to MaxUserPage, and a negative
// offset too, with kind invalid.
func TestUserQueryValidation(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		bad  bool
	}{
		{"page_limit_0", ports.UserPageQuery{Limit: 0}.Validate(), true},
		{"page_limit_1001", ports.UserPageQuery{Limit: ports.MaxUserPage + 1}.Validate(), true},
		{"page_limit_1000", ports.UserPageQuery{Limit: ports.MaxUserPage}.Validate(), false},
		{"query_limit_0", ports.UserQuery{Limit: 0}.ValidatePage(), true},
		{"query_negative_offset", ports.UserQuery{Limit: 1, Offset: -1}.ValidatePage(), true},
		{"query_limit_1000_offset_9", ports.UserQuery{Limit: ports.MaxUserPage, Offset: 9}.ValidatePage(), false},
	} {
		if got := errors.Is(tt.err, domain.ErrInvalid); got != tt.bad || (!tt.bad && tt.err != nil) {
			t.Errorf("%s: error = %v, want invalid %v", tt.name, tt.err, tt.bad)
		}
	}
}

// Ensure the audit log reads a full page when the limit is out of range,
// rather than refusing it.
func TestAuditQueryPageSize(t *testing.T) {
	for limit, want := range map[int]int{-1: ports.MaxAuditPage, 0: ports.MaxAuditPage, 1: 1, 1000: 1000, 1001: ports.MaxAuditPage} {
		if got := (ports.AuditQuery{Limit: limit}).PageSize(); got != want {
			t.Errorf("PageSize(limit %d) = %d, want %d", limit, got, want)
		}
	}
}
