package console

import (
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// auditPageSize is how many entries one page of the audit log shows
// unless the URL's limit (1 to 100) says otherwise.
const auditPageSize = 50

// auditView is the audit log: the filters as given (kept in the form and
// the links) and one page of entries.
type auditView struct {
	ActorType, Actor, Action, TargetType, Target, Since, Until string
	Limit                                                      string
	Rows                                                       []auditRow
	First, Next                                                string
}

// auditRow is one entry, with links to what it names.
type auditRow struct {
	ID, Action, Outcome, Code, RequestID, IP string
	ActorType, ActorID, ActorLink            string
	// Impersonator is the administrator behind an impersonation session
	// the action came through, with the link to their page.
	Impersonator, ImpersonatorLink   string
	TargetType, TargetID, TargetLink string
	At                               time.Time
}

// AuditLogDeps are the Audit log section's use cases (audit.go).
type AuditLogDeps struct {
	AuditLog *admin.AuditLog
}

// auditSection is the Audit log section.
type auditSection struct {
	*base
	auditLog *admin.AuditLog
}

// addAuditRoutes registers the Audit log section.
func (s *auditSection) addAuditRoutes(r shell.Section) {
	r.Get(Base+"/audit", s.auditPage)
}

// targetLink is the console page of what an audit entry names: a user, an
// organization, a domain, a service key, an OAuth client, an identity
// provider or a webhook endpoint by id; signing keys by their list; for
// anything else, the log's own entries about that target.
func targetLink(typ, id string) string {
	if id == "" {
		return ""
	}
	esc := url.PathEscape(id)
	switch typ {
	case "user":
		return Base + "/users/" + esc
	case "organization":
		return Base + "/organizations/" + esc
	case "domain":
		return Base + "/domains/" + esc
	case "oauth_client":
		return Base + "/oauth-clients/" + esc
	case "identity_provider":
		return Base + "/identity-providers/" + esc
	case "webhook":
		return Base + "/webhooks/" + esc
	case "service_key":
		return Base + "/service-keys/" + esc
	case "signing_key":
		return Base + "/signing-keys"
	}
	return edge.PageURL(Base+"/audit", url.Values{"targetType": {typ}, "target": {id}})
}

// actorLink is the console page of an entry's actor: a user's or a service
// key's page, or "" for the command line and the service itself.
func actorLink(typ domain.ActorType, id string) string {
	switch {
	case id == "":
		return ""
	case typ == domain.ActorUser:
		return Base + "/users/" + url.PathEscape(id)
	case typ == domain.ActorServiceKey:
		return Base + "/service-keys/" + url.PathEscape(id)
	}
	return ""
}

// auditRows are entries as the console shows them.
func auditRows(entries []domain.AuditEntry) []auditRow {
	rows := make([]auditRow, 0, len(entries))
	for _, e := range entries {
		rows = append(rows, auditRow{ID: e.ID, Action: e.Action, Outcome: string(e.Outcome), Code: e.Code, RequestID: e.RequestID, IP: e.IPAddress,
			ActorType: string(e.ActorType), ActorID: e.ActorID, ActorLink: actorLink(e.ActorType, e.ActorID),
			Impersonator: e.ImpersonatorID, ImpersonatorLink: actorLink(domain.ActorUser, e.ImpersonatorID),
			TargetType: e.TargetType, TargetID: e.TargetID, TargetLink: targetLink(e.TargetType, e.TargetID), At: e.OccurredAt})
	}
	return rows
}

// auditQuery is the audit log page's query: the filters (trimmed), the
// cursor and the page size, all in the URL, so a page can be shared. The
// bounds are the admin API's.
type auditQuery struct {
	ActorType  string `query:"actorType" validate:"omitempty,oneof=user service_key cli system"`
	Actor      string `query:"actor,trim" validate:"maxbytes=64"`
	Action     string `query:"action,trim" validate:"maxbytes=64"`
	TargetType string `query:"targetType,trim" validate:"maxbytes=32"`
	Target     string `query:"target,trim" validate:"maxbytes=128"`
	Since      string `query:"since" validate:"maxbytes=64,instant"`
	Until      string `query:"until" validate:"maxbytes=64,instant"`
	Cursor     string `query:"cursor" validate:"maxbytes=256"`
	Limit      *int   `query:"limit" validate:"omitempty,min=1,max=100"`
}

// auditQueryErrors say what a malformed part of the query should be, by
// its name.
var auditQueryErrors = map[string]string{
	"actorType":  "The actor type is a user, a service key, the command line, the service itself, or any.",
	"actor":      "The actor id is too long: use at most 64 characters.",
	"action":     "The action is too long: use at most 64 characters.",
	"targetType": "The target type is too long: use at most 32 characters.",
	"target":     "The target id is too long: use at most 128 characters.",
	"since":      "The start is not a time: use the picker, or a time such as 2026-01-31T12:00:00Z.",
	"until":      "The end is not a time: use the picker, or a time such as 2026-01-31T12:00:00Z.",
	"cursor":     "The page link is not valid.",
	"limit":      "The page size is a whole number from 1 to 100.",
}

// bindAuditQuery binds the audit log page's query: the query, its view
// (the filters as given, the times as the date-and-time inputs show them)
// and what is wrong with it, in which field ("" when nothing is).
func bindAuditQuery(c *gin.Context) (aq auditQuery, av *auditView, msg, field string) {
	vs := shell.BindQuery(c, &aq)
	bad, invalid := vs.First()
	av = &auditView{ActorType: aq.ActorType, Actor: aq.Actor, Action: aq.Action, TargetType: aq.TargetType, Target: aq.Target,
		Since: aq.Since, Until: aq.Until}
	if aq.Limit != nil && !slices.ContainsFunc(vs, func(v shell.Violation) bool { return v.Name == "limit" }) {
		av.Limit = c.Query("limit") // the page size as given, kept in the form and the links
	}
	since, until := aq.since(), aq.until()
	// The end comes after the start: checked after the times, before the
	// cursor and the page size.
	if (!invalid || bad.Name == "cursor" || bad.Name == "limit") && !since.IsZero() && !until.IsZero() && !until.After(since) {
		return aq, av, "The end must come after the start.", "until"
	}
	if invalid {
		return aq, av, auditQueryErrors[bad.Name], bad.Name
	}
	if !since.IsZero() {
		av.Since = since.UTC().Format(shell.InstantLocal)
	}
	if !until.IsZero() {
		av.Until = until.UTC().Format(shell.InstantLocal)
	}
	return aq, av, "", ""
}

// since and until are the query's times (zero: none, or not a time).
func (aq auditQuery) since() time.Time { t, _ := shell.Instant(aq.Since); return t }
func (aq auditQuery) until() time.Time { t, _ := shell.Instant(aq.Until); return t }

// listing is the audit log query's use-case input.
func (aq auditQuery) listing() admin.ListAuditLog {
	limit := auditPageSize
	if aq.Limit != nil {
		limit = *aq.Limit
	}
	return admin.ListAuditLog{Cursor: aq.Cursor, Filter: ports.AuditQuery{
		ActorType: domain.ActorType(aq.ActorType), ActorID: aq.Actor, Action: aq.Action, TargetType: aq.TargetType, TargetID: aq.Target,
		Since: aq.since(), Until: aq.until(), Limit: limit}}
}

// auditPage lists the audit log through the admin API's query
// (admin.AuditLog): the filters and the cursor are in the URL, so a
// page can be shared.
func (s *auditSection) auditPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	aq, av, msg, field := bindAuditQuery(c)
	p := sectionPage(v, "Audit log", "audit", "")
	if msg != "" {
		refused(c, s.pages.audit, p, msg, field, av)
		return
	}
	page, err := s.auditLog.List(c.Request.Context(), v.P.User, aq.listing())
	if domain.KindOf(err) == domain.KindInvalid {
		refused(c, s.pages.audit, p, badPageLink, "cursor", av)
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	av.Rows = auditRows(page.Entries)
	av.First, av.Next = auditLinks(*av, aq.Cursor, page.NextCursor)
	s.pages.audit.Render(c, http.StatusOK, p, av)
}

// auditLinks are the links to the first page (when not on it) and the
// next of the audit log filtered as av says.
func auditLinks(av auditView, cursor, next string) (first, nextURL string) {
	link := url.Values{"actorType": {av.ActorType}, "actor": {av.Actor}, "action": {av.Action}, "targetType": {av.TargetType},
		"target": {av.Target}, "since": {av.Since}, "until": {av.Until}, "limit": {av.Limit}}
	return pageLinks(Base+"/audit", link, cursor, next)
}
