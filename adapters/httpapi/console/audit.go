package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/application/query"
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

// addAuditRoutes registers the Audit log section.
func (s *API) addAuditRoutes(r shell.Section) {
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

// auditLocalTime is how a datetime-local input writes a time.
const auditLocalTime = "2006-01-02T15:04:05"

// auditTime reads a time filter: RFC 3339, or what a datetime-local input
// sends (taken as UTC).
func auditTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, true
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", auditLocalTime, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// auditQuery is the audit log page's query, read from the URL: the
// filters as given (trimmed), the times they parse to, the cursor and the
// page size (0 when the URL's is not one).
type auditQuery struct {
	view         auditView
	since, until time.Time
	cursor       string
	limit        int
}

// readAuditQuery reads the audit log page's query, and says what is wrong
// with it and in which field ("" when nothing is).
func readAuditQuery(q url.Values) (aq auditQuery, msg, field string) {
	av := auditView{ActorType: q.Get("actorType"), Actor: strings.TrimSpace(q.Get("actor")), Action: strings.TrimSpace(q.Get("action")),
		TargetType: strings.TrimSpace(q.Get("targetType")), Target: strings.TrimSpace(q.Get("target")), Since: q.Get("since"), Until: q.Get("until")}
	aq.cursor, aq.limit = q.Get("cursor"), auditPageSize
	if av.Limit = q.Get("limit"); av.Limit != "" {
		n, err := strconv.Atoi(av.Limit)
		if err != nil || n < 1 || n > 100 {
			av.Limit, n = "", 0
		}
		aq.limit = n
	}
	var sinceOK, untilOK bool
	aq.since, sinceOK = auditTime(av.Since)
	aq.until, untilOK = auditTime(av.Until)
	aq.view = av
	switch {
	case av.ActorType != "" && av.ActorType != string(domain.ActorUser) && av.ActorType != string(domain.ActorServiceKey) &&
		av.ActorType != string(domain.ActorCLI) && av.ActorType != string(domain.ActorSystem):
		return aq, "The actor type is a user, a service key, the command line, the service itself, or any.", "actorType"
	case len(av.Actor) > 64:
		return aq, "The actor id is too long: use at most 64 characters.", "actor"
	case len(av.Action) > 64:
		return aq, "The action is too long: use at most 64 characters.", "action"
	case len(av.TargetType) > 32:
		return aq, "The target type is too long: use at most 32 characters.", "targetType"
	case len(av.Target) > 128:
		return aq, "The target id is too long: use at most 128 characters.", "target"
	case len(av.Since) > 64 || !sinceOK:
		return aq, "The start is not a time: use the picker, or a time such as 2026-01-31T12:00:00Z.", "since"
	case len(av.Until) > 64 || !untilOK:
		return aq, "The end is not a time: use the picker, or a time such as 2026-01-31T12:00:00Z.", "until"
	case !aq.since.IsZero() && !aq.until.IsZero() && !aq.until.After(aq.since):
		return aq, "The end must come after the start.", "until"
	case len(aq.cursor) > 256:
		return aq, "The page link is not valid.", "cursor"
	case aq.limit == 0:
		return aq, "The page size is a whole number from 1 to 100.", "limit"
	}
	// The times as the date-and-time inputs show them (UTC).
	if !aq.since.IsZero() {
		aq.view.Since = aq.since.UTC().Format(auditLocalTime)
	}
	if !aq.until.IsZero() {
		aq.view.Until = aq.until.UTC().Format(auditLocalTime)
	}
	return aq, "", ""
}

// listing is the audit log query's use-case input.
func (aq auditQuery) listing() query.ListAuditLog {
	av := aq.view
	return query.ListAuditLog{Cursor: aq.cursor, Filter: ports.AuditQuery{
		ActorType: domain.ActorType(av.ActorType), ActorID: av.Actor, Action: av.Action, TargetType: av.TargetType, TargetID: av.Target,
		Since: aq.since, Until: aq.until, Limit: aq.limit}}
}

// auditPage lists the audit log through the admin API's query
// (Queries.AuditLog): the filters and the cursor are in the URL, so a
// page can be shared.
func (s *API) auditPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	aq, msg, field := readAuditQuery(c.Request.URL.Query())
	av := &aq.view
	p := v.Page("Audit log")
	p.Section, p.Error, p.Field = "audit", msg, field
	if msg != "" {
		s.pages.audit.Render(c, http.StatusBadRequest, p, av)
		return
	}
	page, err := s.auditLog.Handle(c.Request.Context(), v.P.User, aq.listing())
	if domain.KindOf(err) == domain.KindInvalid {
		p.Error, p.Field = "The page link is not valid: start from the first page.", "cursor"
		s.pages.audit.Render(c, http.StatusBadRequest, p, av)
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	av.Rows = auditRows(page.Entries)
	av.First, av.Next = auditLinks(*av, aq.cursor, page.NextCursor)
	s.pages.audit.Render(c, http.StatusOK, p, av)
}

// auditLinks are the links to the first page (when not on it) and the
// next of the audit log filtered as av says.
func auditLinks(av auditView, cursor, next string) (first, nextURL string) {
	link := url.Values{"actorType": {av.ActorType}, "actor": {av.Actor}, "action": {av.Action}, "targetType": {av.TargetType},
		"target": {av.Target}, "since": {av.Since}, "until": {av.Until}, "limit": {av.Limit}}
	if cursor != "" {
		first = edge.PageURL(Base+"/audit", link)
	}
	if next != "" {
		link.Set("cursor", next)
		nextURL = edge.PageURL(Base+"/audit", link)
	}
	return first, nextURL
}
