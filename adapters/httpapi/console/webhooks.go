package console

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/application/webhook"
	"github.com/gatehouse/gatehouse/domain"
)

// webhooksView is the Webhooks list with the form that registers an
// endpoint, or, after registering, the endpoint's secret shown once.
type webhooksView struct {
	Rows   []webhookRow
	Events []string
	Form   webhookForm
}

// webhookForm is the registration form as sent.
type webhookForm struct {
	URL, Description string
	Events           map[string]bool
}

// webhookRow is an endpoint as the console shows it: never its secret.
type webhookRow struct {
	ID, URL, Description, Path, DisabledReason string
	Events                                     []string
	Enabled, Failing                           bool
	Created, LastSuccess, FailingSince         time.Time
	DisabledAt, PreviousExpires                time.Time
}

// webhookView is an endpoint's page: its facts, one page of its
// deliveries, and, after a rotation or a registration, its new secret.
type webhookView struct {
	webhookRow
	Secret      string
	Deliveries  []deliveryRow
	Status      string
	First, Next string
	Confirm     string
}

// deliveryRow is one message for the endpoint and its latest attempt.
type deliveryRow struct {
	MessageID, Event, Status, LastError string
	Attempts, LastCode                  int
	Created, NextAttempt, LastAt        time.Time
}

// webhookPageSize is how many deliveries an endpoint's page shows.
const webhookPageSize = 25

// WebhooksDeps are the Webhooks section's use cases (webhooks.go).
type WebhooksDeps struct {
	Webhooks *webhook.Webhooks // the endpoints, their messages and replays
}

// webhooksSection is the Webhooks section.
type webhooksSection struct {
	*base
	webhooks *webhook.Webhooks
}

// addWebhookRoutes registers the Webhooks section.
func (s *webhooksSection) addWebhookRoutes(r shell.Section) {
	const base = Base + "/webhooks"
	r.Get(base, s.webhooksPage)
	r.Get(base+"/:id", s.webhookPage)
	r.Post(base, s.createWebhook)
	r.Post(base+"/:id/rotate-secret", s.rotateWebhookSecret)
	r.Post(base+"/:id/enable", s.setWebhookEnabled(true))
	r.Post(base+"/:id/disable", s.setWebhookEnabled(false))
	r.Post(base+"/:id/replay", s.replayWebhookMessage)
	r.Post(base+"/:id/delete", s.deleteWebhook)
}

func webhookPath(id string) string { return Base + "/webhooks/" + url.PathEscape(id) }

func webhookRowOf(e domain.WebhookEndpoint) webhookRow {
	r := webhookRow{ID: string(e.ID), URL: e.URL, Description: e.Description, Path: webhookPath(string(e.ID)), DisabledReason: e.DisabledReason,
		Enabled: e.Enabled, Failing: !e.FailingSince.IsZero(), Created: e.CreatedAt, LastSuccess: e.LastSuccessAt, FailingSince: e.FailingSince,
		DisabledAt: e.DisabledAt}
	if len(e.SealedPreviousSecret) > 0 {
		r.PreviousExpires = e.PreviousSecretExpiresAt
	}
	for _, t := range e.EventTypes {
		r.Events = append(r.Events, string(t))
	}
	return r
}

// webhooksPage lists the endpoints (webhook.Webhooks.List, as GET
// /api/admin/webhooks).
func (s *webhooksSection) webhooksPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	s.showWebhooks(c, v, http.StatusOK, "", "", webhookForm{})
}

func (s *webhooksSection) showWebhooks(c *gin.Context, v *shell.Visit, status int, msg, field string, f webhookForm) {
	all, err := s.webhooks.List(c.Request.Context(), v.Req)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	wv := &webhooksView{Form: f}
	for _, t := range domain.EventTypes {
		wv.Events = append(wv.Events, string(t))
	}
	for _, e := range all {
		wv.Rows = append(wv.Rows, webhookRowOf(e))
	}
	p := sectionPage(v, "Webhooks", "webhooks", deletedNotice(c.Request.URL.Query(), "The endpoint is deleted with its deliveries."))
	p.Error, p.Field = msg, field
	s.pages.webhooks.Render(c, status, p, wv)
}

// deliveriesQuery is an endpoint's page's query: its deliveries' filter
// and cursor, in the URL.
type deliveriesQuery struct {
	Status string `query:"status" validate:"omitempty,oneof=pending succeeded failed"`
	Cursor string `query:"cursor" validate:"maxbytes=256"`
}

// deliveriesQueryErrors say what a malformed part of the query should be,
// by its name.
var deliveriesQueryErrors = map[string]string{
	"status": "The status is pending, succeeded, failed, or any.",
	"cursor": "The page link is not valid.",
}

// webhookPage shows an endpoint and its deliveries (webhook.Webhooks.Get
// and Messages), filtered by status and paged with the cursor in the URL.
func (s *webhooksSection) webhookPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	s.showWebhook(c, v, http.StatusOK, "", "", "", "")
}

// showWebhook renders an endpoint's page with status; secret is a new
// signing secret to show this once, msg and field a refused form's error.
func (s *webhooksSection) showWebhook(c *gin.Context, v *shell.Visit, status int, secret, msg, field, confirm string) {
	id := c.Param("id")
	if len(id) > maxID {
		s.shell.Refusal(c, http.StatusBadRequest, "Bad request", "The endpoint id is too long.", edge.FieldError{Location: "path.id", Message: "is too long"})
		return
	}
	e, err := s.webhooks.Get(c.Request.Context(), v.Req, domain.WebhookEndpointID(id))
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	p := sectionPage(v, webhookTitle(secret), "webhooks", webhookNotices.Of(c))
	p.Error, p.Field = msg, field
	wq := bindDeliveriesQuery(c, p, &status)
	page, err := s.deliveriesOf(c.Request.Context(), v, e.ID, &wq, p, &status)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	wv := &webhookView{webhookRow: webhookRowOf(e), Secret: secret, Confirm: confirm}
	wv.deliveries(page, wq)
	s.pages.webhook.Render(c, status, p, wv)
}

// webhookTitle is an endpoint's page's title: it says when the page shows
// a new signing secret.
func webhookTitle(secret string) string {
	if secret != "" {
		return "Webhook endpoint: its signing secret"
	}
	return "Webhook endpoint"
}

// listing is the use case's query for wq.
func (wq deliveriesQuery) listing() webhook.ListMessages {
	return webhook.ListMessages{Status: domain.WebhookDeliveryStatus(wq.Status), Limit: webhookPageSize, Cursor: wq.Cursor}
}

// deliveriesOf reads the endpoint's deliveries wq asks for; a cursor the
// use case refuses is p's error (status 400), and the first page shows.
func (s *webhooksSection) deliveriesOf(ctx context.Context, v *shell.Visit, id domain.WebhookEndpointID, wq *deliveriesQuery, p *shell.Page, status *int) (webhook.MessagePage, error) {
	page, err := s.webhooks.Messages(ctx, v.Req, id, wq.listing())
	if err == nil || domain.KindOf(err) != domain.KindInvalid {
		return page, err
	}
	p.Error, p.Field, *status = badPageLink, "cursor", http.StatusBadRequest
	wq.Cursor = ""
	return s.webhooks.Messages(ctx, v.Req, id, wq.listing())
}

// bindDeliveriesQuery binds an endpoint's page's query; a malformed one
// is p's error (status 400), and the page shows the first page of every
// delivery, or of the status asked for when only the cursor is wrong. A
// form's answer shows the first page.
func bindDeliveriesQuery(c *gin.Context, p *shell.Page, status *int) deliveriesQuery {
	var wq deliveriesQuery
	if c.Request.Method == http.MethodPost {
		return wq
	}
	if bad, invalid := shell.BindQuery(c, &wq).First(); invalid {
		p.Error, p.Field, *status, wq.Cursor = deliveriesQueryErrors[bad.Name], bad.Name, http.StatusBadRequest, ""
		if bad.Name == "status" {
			wq.Status = ""
		}
	}
	return wq
}

// deliveries fills wv with page, the deliveries wq asked for, and the
// links to the first and the next page.
func (wv *webhookView) deliveries(page webhook.MessagePage, wq deliveriesQuery) {
	wv.Status = wq.Status
	for _, d := range page.Deliveries {
		row := deliveryRow{MessageID: d.MessageID, Event: string(d.EventType), Status: string(d.Status), Attempts: d.Attempts,
			Created: d.CreatedAt, NextAttempt: d.NextAttemptAt}
		if a := d.LastAttempt; a != nil {
			row.LastCode, row.LastError, row.LastAt = a.StatusCode, a.Error, a.At
		}
		wv.Deliveries = append(wv.Deliveries, row)
	}
	link := url.Values{"status": {wv.Status}}
	if wq.Cursor != "" {
		wv.First = edge.PageURL(wv.Path, link)
	}
	if page.NextCursor != "" {
		link.Set("cursor", page.NextCursor)
		wv.Next = edge.PageURL(wv.Path, link)
	}
}

var webhookNotices = shell.Notices{
	"enabled":  "The endpoint is enabled: deliveries resume and its failures are forgotten.",
	"disabled": "The endpoint is disabled: nothing is sent to it until it is enabled again.",
	"replayed": "The message is queued to be sent again now.",
}

// newWebhookForm is the registration form as posted, bounded before the
// use case looks at it: the URL (domain.MaxWebhookURLLength), the
// description (domain.MaxWebhookDescriptionLength characters of at most 4
// bytes) and the event types (no more than there are:
// len(domain.EventTypes); which they are is the use case's rule).
type newWebhookForm struct {
	URL         string   `form:"url,trim" validate:"maxbytes=2048"`
	Description string   `form:"description" validate:"maxbytes=2000"`
	Events      []string `form:"events" validate:"max=27"`
}

// newWebhookErrors say what a malformed part of the registration form
// should be, by its name.
var newWebhookErrors = map[string]string{
	"url":         "The URL is too long: at most 2048 characters.",
	"description": "The description is too long: at most 500 characters.",
	"events":      "Too many event types.",
}

// shown is the form as shown again: a part refused for its length
// (named) is dropped, and so is an event type too long to be one.
func (wf newWebhookForm) shown(refused string) webhookForm {
	f := webhookForm{URL: wf.URL, Description: wf.Description, Events: map[string]bool{}}
	switch refused {
	case "url":
		f.URL = ""
	case "description":
		f.Description = ""
	case "":
		for _, e := range wf.Events {
			if len(e) <= 64 {
				f.Events[e] = true
			}
		}
	}
	return f
}

// createWebhook registers an endpoint (webhook.Webhooks.Create, as POST
// /api/admin/webhooks) and answers with its page showing the signing
// secret this once: the answer is not a redirect, so the secret is in no
// URL and no later page; reloading re-posts a spent form, which is refused.
func (s *webhooksSection) createWebhook(c *gin.Context, v *shell.Visit) {
	var wf newWebhookForm
	if bad, invalid := shell.BindForm(c, &wf).First(); invalid {
		s.showWebhooks(c, v, http.StatusBadRequest, newWebhookErrors[bad.Name], bad.Name, wf.shown(bad.Name))
		return
	}
	issued, err := s.webhooks.Create(c.Request.Context(), v.Req, webhook.CreateWebhook{URL: wf.URL, Description: wf.Description, EventTypes: wf.Events})
	if err != nil {
		if shell.IsStepUp(err) { // the hosted step-up page, and back (Shell.Refuse)
			s.shell.Refuse(c, err)
			return
		}
		if msg, field, ok := refusedField(err); ok {
			if field == "eventTypes" {
				field = "events"
			}
			s.showWebhooks(c, v, idpStatus(err), msg, field, wf.shown(""))
			return
		}
		s.shell.Refuse(c, err)
		return
	}
	c.Params = append(c.Params, gin.Param{Key: "id", Value: string(issued.Endpoint.ID)})
	s.showWebhook(c, v, http.StatusCreated, issued.Secret, "", "", "")
}

// rotateWebhookSecret gives the endpoint a new secret
// (webhook.Webhooks.RotateSecret) and shows it this once.
func (s *webhooksSection) rotateWebhookSecret(c *gin.Context, v *shell.Visit) {
	issued, err := s.webhooks.RotateSecret(c.Request.Context(), v.Req, domain.WebhookEndpointID(c.Param("id")))
	if err != nil {
		s.shell.Refuse(c, err) // a step-up refusal: the hosted step-up page, and back
		return
	}
	s.showWebhook(c, v, http.StatusOK, issued.Secret, "", "", "")
}

// setWebhookEnabled turns the endpoint on or off (webhook.Webhooks.Update,
// as PATCH /api/admin/webhooks/{id} with enabled).
func (s *webhooksSection) setWebhookEnabled(on bool) func(c *gin.Context, v *shell.Visit) {
	return func(c *gin.Context, v *shell.Visit) {
		if _, err := s.webhooks.Update(c.Request.Context(), v.Req, domain.WebhookEndpointID(c.Param("id")), webhook.UpdateWebhook{Enabled: &on}); err != nil {
			s.shell.Refuse(c, err)
			return
		}
		what := "disabled"
		if on {
			what = "enabled"
		}
		shell.Done(c, webhookPath(c.Param("id")), what)
	}
}

// messageForm names the message to send again.
type messageForm struct {
	Message string `form:"message" validate:"required,maxbytes=128"`
}

// replayWebhookMessage sends a message again (webhook.Webhooks.Replay).
func (s *webhooksSection) replayWebhookMessage(c *gin.Context, v *shell.Visit) {
	var mf messageForm
	if _, invalid := shell.BindForm(c, &mf).First(); invalid {
		s.shell.Refusal(c, http.StatusBadRequest, "Bad request", "The message id is missing or too long. Nothing was sent.",
			edge.FieldError{Location: "body.message", Message: "is missing or too long"})
		return
	}
	if err := s.webhooks.Replay(c.Request.Context(), v.Req, domain.WebhookEndpointID(c.Param("id")), mf.Message); err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, webhookPath(c.Param("id")), "replayed")
}

// deleteWebhook deletes the endpoint with its deliveries
// (webhook.Webhooks.Delete) once the typed confirmation is its URL.
func (s *webhooksSection) deleteWebhook(c *gin.Context, v *shell.Visit) {
	ctx := c.Request.Context()
	id := domain.WebhookEndpointID(c.Param("id"))
	e, err := s.webhooks.Get(ctx, v.Req, id)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	if confirm := confirmation(c); confirm != e.URL {
		if len(confirm) > domain.MaxWebhookURLLength {
			confirm = ""
		}
		s.showWebhook(c, v, http.StatusBadRequest, "", "Type the endpoint's URL exactly to confirm. Nothing was deleted.", "confirm", confirm)
		return
	}
	if err := s.webhooks.Delete(ctx, v.Req, id); err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Redirect(c, Base+"/webhooks?deleted=1")
}
