package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/ports"
)

// SignInBucketJSON is one step of a sign-in series.
type SignInBucketJSON struct {
	Start     time.Time `json:"start" doc:"The step's start: an hour, or a day from midnight UTC."`
	Succeeded int       `json:"succeeded" doc:"Sign-ins that started a session."`
	Failed    int       `json:"failed" doc:"Sign-ins refused: wrong or unknown credentials, a locked, banned or unverified account, a wrong second factor, an address that must use its organization's provider, the service's own failure."`
}

// SignInSeriesJSON is the sign-ins of the last day by hour and of the
// last month by day.
type SignInSeriesJSON struct {
	Hourly []SignInBucketJSON `json:"hourly" doc:"The last 24 hours, oldest first, the last one the current hour so far."`
	Daily  []SignInBucketJSON `json:"daily" doc:"The last 30 days (UTC), oldest first, the last one today so far."`
}

// OverviewOutput is the state of the service at a glance.
type OverviewOutput struct {
	Body struct {
		At             time.Time        `json:"at" doc:"When the overview was read."`
		Users          int              `json:"users"`
		Organizations  int              `json:"organizations"`
		Domains        map[string]int   `json:"domains" doc:"How many domains are in each status: pending, verified and failed (zero included)."`
		ActiveSessions int              `json:"activeSessions" doc:"Sessions not expired at at."`
		SignIns        SignInSeriesJSON `json:"signIns"`
		RecentAudit    []AuditEntryJSON `json:"recentAudit" doc:"The 10 latest audit entries, newest first."`
	}
}

func (s *API) getOverview(ctx context.Context, _ *struct{}) (*OverviewOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	o, err := s.Overview.Overview(ctx, p.User)
	if err != nil {
		return nil, err
	}
	out := &OverviewOutput{}
	b := &out.Body
	b.At, b.Users, b.Organizations, b.ActiveSessions = o.At, o.Users, o.Organizations, o.ActiveSessions
	b.Domains = make(map[string]int, len(o.Domains))
	for st, n := range o.Domains {
		b.Domains[string(st)] = n
	}
	b.SignIns.Hourly, b.SignIns.Daily = signInBuckets(o.Hourly), signInBuckets(o.Daily)
	b.RecentAudit = make([]AuditEntryJSON, len(o.RecentAudit))
	for i, e := range o.RecentAudit {
		b.RecentAudit[i] = s.auditEntryJSON(e)
	}
	return out, nil
}

func signInBuckets(in []ports.SignInBucket) []SignInBucketJSON {
	out := make([]SignInBucketJSON, len(in))
	for i, b := range in {
		out[i] = SignInBucketJSON{Start: b.Start, Succeeded: b.Succeeded, Failed: b.Failed}
	}
	return out
}

// AddOverviewRoutes registers the overview (auth contract).
func (s *API) AddOverviewRoutes() {
	edge.Add(s.routes, edge.ContractAuth, huma.Operation{OperationID: "getOverview", Method: http.MethodGet, Path: edge.AdminBase + "/overview",
		Tags: []string{"Overview"}, Summary: "The service at a glance", Security: edge.SessionSecurity,
		Errors: []int{http.StatusUnauthorized, http.StatusForbidden},
		Description: "How many users, organizations and active sessions there are, the domains by status, the sign-ins and failed sign-ins " +
			"of the last 24 hours (hourly) and 30 days (daily), counted durably and shared by every instance on the database, and the 10 " +
			"latest audit entries. Needs a platform administrator's session: 401 without a session, 403 for anyone else."},
		s.getOverview)
}
