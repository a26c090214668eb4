package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/application/hostdomain"
	"github.com/gatehouse/gatehouse/domain"
)

// The Domains section: every domain with its status, a domain's page with
// the DNS records to publish and the last check, and the administrator's
// actions. Reads and changes go through hostdomain.Domains: the listing and
// reads of the trusted API (/api/domains), the admin API's update
// (Domains.Update, audited as admin.update-domain: "check now" is its
// recheck, which wakes the verifier), and the administrator's create and
// delete (Domains.CreateAsAdmin, DeleteAsAdmin).

// DomainsDeps are the Domains section's use cases (domains.go).
type DomainsDeps struct {
	Domains *hostdomain.Domains // the trusted API's reads, the admin API's update, the administrator's create and delete
}

// domainsSection is the Domains section.
type domainsSection struct {
	*base
	domains *hostdomain.Domains
}

// addDomainRoutes registers the Domains section.
func (s *domainsSection) addDomainRoutes(r shell.Section) {
	const d = Base + "/domains/:id"
	r.Get(Base+"/domains", s.domainsPage)
	r.Get(d, s.domainPage)
	r.Post(Base+"/domains", s.createDomain)
	r.Post(d+"/check", s.checkDomain)
	r.Post(d+"/update", s.updateDomain)
	r.Post(d+"/delete", s.deleteDomain)
}

// domainPageSize is how many domains a page shows.
const domainPageSize = 50

// domainsView is the domain list: its filters as given, one page, and the
// add form's input.
type domainsView struct {
	Status, Org string
	Rows        []domainRow
	First, Next string
	Statuses    []string
	// Hostname and NewOrg are what the add form sent, when refused.
	Hostname, NewOrg string
}

type domainRow struct {
	ID, Hostname, Status, Org string
	LastChecked, Created      time.Time
}

var domainStatuses = []string{string(domain.DomainPending), string(domain.DomainVerified), string(domain.DomainFailed)}

// domainsQuery is the Domains page's query: the filters and the cursor, in
// the URL, so a page can be shared.
type domainsQuery struct {
	Status  string `query:"status" validate:"omitempty,oneof=pending verified failed"`
	Org     string `query:"org" validate:"maxbytes=128"`
	Cursor  string `query:"cursor" validate:"maxbytes=512"`
	Deleted string `query:"deleted"`
}

// domainsQueryErrors say what a malformed part of the query should be, by
// its name.
var domainsQueryErrors = map[string]string{
	"status": "The status is pending, verified, failed, or any.",
	"org":    "The organization id is too long.",
	"cursor": "The page link is not valid.",
}

// listing is the use case's query for dq.
func (dq domainsQuery) listing() hostdomain.ListDomains {
	return hostdomain.ListDomains{OrganizationID: domain.OrganizationID(dq.Org), Status: domain.DomainStatus(dq.Status), Limit: domainPageSize, Cursor: dq.Cursor}
}

// notice is what the list says when a deletion landed on it.
func (dq domainsQuery) notice() string {
	if dq.Deleted == "" {
		return ""
	}
	return "The domain is deleted: its hostname can be claimed again."
}

// domainsViewOf is the list as dq filters it, with a refused add form's
// hostname and organization (the rows come with rows).
func domainsViewOf(dq domainsQuery, hostname, org string) *domainsView {
	return &domainsView{Status: dq.Status, Org: dq.Org, Statuses: domainStatuses, Hostname: hostname, NewOrg: org}
}

// rows fills dv with page, the domains after cursor, and the links to the
// first and the next page.
func (dv *domainsView) rows(page hostdomain.DomainPage, cursor string) {
	for _, d := range page.Domains {
		dv.Rows = append(dv.Rows, domainRow{ID: string(d.ID()), Hostname: d.Hostname(), Status: string(d.Status()), Org: string(d.OrganizationID()),
			LastChecked: d.LastCheckedAt(), Created: d.CreatedAt()})
	}
	dv.First, dv.Next = pageLinks(Base+"/domains", url.Values{"status": {dv.Status}, "org": {dv.Org}}, cursor, page.NextCursor)
}

// domainsPage lists domains through Domains.List, newest first, filtered
// by status and organization, with the filters and the cursor in the URL.
func (s *domainsSection) domainsPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	s.showDomains(c, v, http.StatusOK, "", "", "", "")
}

// showDomains renders the list with status, and a refused add form's
// error, field and input.
func (s *domainsSection) showDomains(c *gin.Context, v *shell.Visit, status int, msg, field, hostname, org string) {
	var dq domainsQuery
	bad, invalid := shell.BindQuery(c, &dq).First()
	dv := domainsViewOf(dq, hostname, org)
	p := sectionPage(v, "Domains", "domains", dq.notice())
	p.Error, p.Field = msg, field
	if invalid {
		refused(c, s.pages.domains, p, domainsQueryErrors[bad.Name], bad.Name, dv)
		return
	}
	page, err := s.domains.List(c.Request.Context(), dq.listing())
	if domain.KindOf(err) == domain.KindInvalid {
		refused(c, s.pages.domains, p, badPageLink, "cursor", dv)
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	dv.rows(page, dq.Cursor)
	s.pages.domains.Render(c, status, p, dv)
}

// newDomainForm is the add form: the hostname (the use case checks it)
// and the organization's id.
type newDomainForm struct {
	Hostname     string `form:"hostname,trim"`
	Organization string `form:"organization,trim" validate:"maxbytes=128"`
}

// createDomain claims a hostname through Domains.CreateAsAdmin and shows
// the new domain's records.
func (s *domainsSection) createDomain(c *gin.Context, v *shell.Visit) {
	var df newDomainForm
	if _, invalid := shell.BindForm(c, &df).First(); invalid {
		s.showDomains(c, v, http.StatusBadRequest, "The organization id is too long.", "organization", keep(df.Hostname, 1024), "")
		return
	}
	host, org := df.Hostname, df.Organization
	d, err := s.domains.CreateAsAdmin(c.Request.Context(), v.Req, hostdomain.CreateDomain{Hostname: host, OrganizationID: domain.OrganizationID(org)})
	if field, msg, ok := formField(err); ok || domain.KindOf(err) == domain.KindNotFound {
		if !ok {
			field, msg = "organization", "No organization has this id."
		}
		if field == "organizationId" {
			field = "organization"
		}
		s.showDomains(c, v, http.StatusBadRequest, msg, field, keep(host, 1024), org)
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, domainPath(string(d.ID())), "created")
}

// domainView is a domain's page.
type domainView struct {
	ID, Hostname, Status, Org, Path, Manual string
	Attempts                                int
	LastChecked, NextCheck, Verified        time.Time
	Failed, Created                         time.Time
	Records                                 []recordRow
	// Outcome says in words what the last check found.
	Outcome string
	Form    domainForm
}

type recordRow struct {
	N                               int
	Type, Name, Value, Status, Seen string
	Required                        bool
}

// domainForm is what a refused form sent, shown again.
type domainForm struct{ Org, Reason, Confirm string }

// domainPage shows a domain through Domains.Get.
func (s *domainsSection) domainPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	s.showDomain(c, v, http.StatusOK, "", "", nil)
}

// showDomain renders a domain's page with status, and a refused form's
// error, field and input (nil: the stored values).
func (s *domainsSection) showDomain(c *gin.Context, v *shell.Visit, status int, msg, field string, f *domainForm) {
	id := domain.DomainID(c.Param("id"))
	if len(id) > maxID {
		s.shell.Refusal(c, http.StatusBadRequest, "Bad request", "The domain id is too long.", edge.FieldError{Location: "path.id", Message: "is too long"})
		return
	}
	d, err := s.domains.Get(c.Request.Context(), id)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	p := sectionPage(v, d.Hostname(), "domains", domainNotices.Of(c))
	p.Error, p.Field = msg, field
	s.pages.domain.Render(c, status, p, domainViewOf(d, f))
}

// domainViewOf is d's page, with a refused form's input f (nil: the
// stored values): its records, and what the last check found.
func domainViewOf(d *domain.Domain, f *domainForm) *domainView {
	dv := &domainView{ID: string(d.ID()), Hostname: d.Hostname(), Status: string(d.Status()), Org: string(d.OrganizationID()),
		Path: Base + "/domains/" + url.PathEscape(string(d.ID())), Manual: d.ManualReason(), Attempts: d.Attempts(), LastChecked: d.LastCheckedAt(),
		NextCheck: d.NextCheckAt(), Verified: d.VerifiedAt(), Failed: d.FailedAt(), Created: d.CreatedAt(), Form: domainForm{Org: string(d.OrganizationID())}}
	if f != nil {
		dv.Form = *f
	}
	found, all := 0, 0
	for i, r := range d.Records() {
		dv.Records = append(dv.Records, recordRow{N: i + 1, Type: string(r.Type), Name: r.Name, Value: r.Value, Status: string(r.Status),
			Seen: strings.Join(r.Observed, ", "), Required: r.Required})
		if r.Required {
			all++
			if r.Status == domain.RecordFound {
				found++
			}
		}
	}
	switch {
	case d.LastCheckedAt().IsZero():
		dv.Outcome = "Not checked yet."
	case found == all:
		dv.Outcome = "Every required record was found."
	default:
		dv.Outcome = "Some required records were missing or did not match."
	}
	return dv
}

// domainNotices say what a form did, after its redirect (?done=).
var domainNotices = shell.Notices{
	"created":  "The domain is claimed. Publish its DNS records; the first check runs now and again until they are found.",
	"checking": "A check is asked for: it runs within moments. Reload the page to see its outcome.",
	"moved":    "The domain's organization is changed.", "verified": "The domain is verified by hand.",
}

// domainPath is a domain's page.
func domainPath(id string) string { return Base + "/domains/" + url.PathEscape(id) }

// checkDomain asks for a check now: the admin API's recheck
// (Domains.Update), which makes the domain due and wakes the verifier.
func (s *domainsSection) checkDomain(c *gin.Context, v *shell.Visit) {
	if _, err := s.domains.Update(c.Request.Context(), v.Req, domain.DomainID(c.Param("id")), hostdomain.UpdateDomain{Recheck: true}); err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, domainPath(c.Param("id")), "checking")
}

// updateDomainForm is one of the domain page's update forms, which part
// says: "organization" moves the domain (empty: to none), "verify" marks
// it verified by hand with a reason (the use case checks it).
type updateDomainForm struct {
	Part         string `form:"part" validate:"oneof=organization verify"`
	Organization string `form:"organization,trim" validate:"maxbytes=128"`
	Reason       string `form:"reason"`
}

// update is the use case's command for the part, what its notice says,
// and the field a refusal names.
func (df *updateDomainForm) update() (cmd hostdomain.UpdateDomain, done, field string) {
	if df.Part == "organization" {
		return hostdomain.UpdateDomain{SetOrganization: true, OrganizationID: domain.OrganizationID(df.Organization)}, "moved", "organization"
	}
	return hostdomain.UpdateDomain{VerifyReason: &df.Reason}, "verified", "reason"
}

// updateDomain is the admin API's update (Domains.Update): part
// "organization" moves the domain (empty: to none), part "verify" marks it
// verified by hand with a reason.
func (s *domainsSection) updateDomain(c *gin.Context, v *shell.Visit) {
	var df updateDomainForm
	bad, invalid := shell.BindForm(c, &df).First()
	if invalid && bad.Name == "part" {
		s.shell.Refusal(c, http.StatusBadRequest, "Bad request", "The form does not say what to change. Nothing was changed.", edge.FieldError{Location: "body.part", Message: "must be organization or verify"})
		return
	}
	cmd, done, field := df.update()
	if invalid && field == "organization" { // the organization's id is too long; a verification does not read it
		s.showDomain(c, v, http.StatusBadRequest, "The organization id is too long. Nothing was changed.", field, &domainForm{Reason: df.Reason})
		return
	}
	_, err := s.domains.Update(c.Request.Context(), v.Req, domain.DomainID(c.Param("id")), cmd)
	if msg, ok := updateRefusal(err, field); ok {
		s.showDomain(c, v, http.StatusBadRequest, msg, field, &domainForm{Org: df.Organization, Reason: keep(df.Reason, 2048)})
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, domainPath(c.Param("id")), done)
}

// updateRefusal is what the domain's page says when the use case refuses
// an update of field (a reason out of bounds, an organization no one has),
// and whether err is such a refusal (any other is a refusal page).
func updateRefusal(err error, field string) (string, bool) {
	var de *domain.Error
	if !errors.As(err, &de) || (de.Kind != domain.KindInvalid && de.Code != "organization.not_found") {
		return "", false
	}
	if field == "organization" {
		return "No organization has this id. Nothing was changed.", true
	}
	return "The reason must be 1 to 500 characters. Nothing was changed.", true
}

// deleteDomain deletes through Domains.DeleteAsAdmin once the typed
// confirmation is the hostname.
func (s *domainsSection) deleteDomain(c *gin.Context, v *shell.Visit) {
	ctx := c.Request.Context()
	id := domain.DomainID(c.Param("id"))
	d, err := s.domains.Get(ctx, id)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	confirm := confirmation(c)
	if confirm != d.Hostname() {
		if len(confirm) > 1024 {
			confirm = ""
		}
		s.showDomain(c, v, http.StatusBadRequest, "Type the hostname exactly to confirm. Nothing was deleted.", "confirm",
			&domainForm{Org: string(d.OrganizationID()), Confirm: confirm})
		return
	}
	if err := s.domains.DeleteAsAdmin(ctx, v.Req, id); err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Redirect(c, Base+"/domains?deleted=1")
}
