package console

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/chart"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/ports"
)

// overviewView is the overview: the counts, the two sign-in charts and the
// latest audit entries.
type overviewView struct {
	At                                   time.Time
	Users, Organizations, ActiveSessions int
	Domains                              []overviewDomainCount
	Day, Month                           chartView
	Recent                               []auditRow
}

// chartView is a drawn chart, what it covers and its totals.
type chartView struct {
	chart.Chart
	Span          string
	Total, Failed int
}

// overviewDomainCount is how many domains are in a status.
type overviewDomainCount struct {
	Status string
	Count  int
}

// OverviewDeps are the Overview section's use cases (overview.go).
type OverviewDeps struct {
	Dashboard *admin.Dashboard // the counts, the sign-ins and the latest audit entries
}

// overviewSection is the Overview section.
type overviewSection struct {
	*base
	overview *admin.Dashboard
}

// addOverviewRoutes registers the Overview section.
func (s *overviewSection) addOverviewRoutes(r shell.Section) {
	r.Get(Base+"/overview", s.overviewPage)
}

// overviewPage shows the service at a glance through the admin API's
// query (admin.Dashboard, GET /api/admin/overview). The charts are SVG
// drawn here (no style attribute, no script: the CSP holds) with their
// numbers in a table beside them. Their steps are named in UTC: the
// server does not know the viewer's zone, and says so.
func (s *overviewSection) overviewPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	o, err := s.overview.Overview(c.Request.Context(), v.P.User)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	ov, err := overviewViewOf(o)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	s.pages.overview.Render(c, http.StatusOK, sectionPage(v, "Overview", "overview", ""), ov)
}

// overviewViewOf is the overview of o: its counts, its sign-ins drawn, and
// its latest audit entries.
func overviewViewOf(o *admin.Overview) (*overviewView, error) {
	ov := &overviewView{At: o.At, Users: o.Users, Organizations: o.Organizations, ActiveSessions: o.ActiveSessions, Recent: auditRows(o.RecentAudit)}
	for _, st := range admin.DomainStatuses {
		ov.Domains = append(ov.Domains, overviewDomainCount{Status: string(st), Count: o.Domains[st]})
	}
	hour := func(t time.Time) string { return t.UTC().Format("15:04") }
	day := func(t time.Time) string { return t.UTC().Format("2 Jan") }
	var err error
	if ov.Day, err = drawSignIns("signins-day", "Last 24 hours", "by hour", o.Hourly, hour); err != nil {
		return nil, err
	}
	ov.Month, err = drawSignIns("signins-month", "Last 30 days", "by day", o.Daily, day)
	return ov, err
}

// drawSignIns draws a sign-in series and sums it.
func drawSignIns(id, span, step string, buckets []ports.SignInBucket, label func(time.Time) string) (chartView, error) {
	cv := chartView{Span: span}
	var err error
	if cv.Chart, err = chart.Render(chart.FromBuckets(id, "Sign-ins, "+strings.ToLower(span)+" (UTC, "+step+")", buckets, label)); err != nil {
		return cv, err
	}
	for _, b := range buckets {
		cv.Total, cv.Failed = cv.Total+b.Succeeded, cv.Failed+b.Failed
	}
	return cv, nil
}
