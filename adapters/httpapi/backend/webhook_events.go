package backend

import (
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/domain"
)

// The trusted contract's OpenAPI 3.1 webhooks section: one entry per event
// of the catalogue, a POST whose body is the event's payload, {type,
// timestamp, data, actor (impersonations only)}, data's schema generated from the same Go type the
// encoder presents it with, and whose headers are the Standard Webhooks
// ones.

// webhookHeaders are the headers every delivery carries.
var webhookHeaders = []*huma.Param{
	{Name: "webhook-id", In: "header", Required: true, Schema: &huma.Schema{Type: huma.TypeString},
		Description: "The message's id, msg_ and random characters: the same on every attempt and replay of this event. Use it to ignore a message already handled (delivery is at least once).",
		Example:     "msg_2mXcR8pL1sN7bY4wZ6hJ0aE5dF"},
	{Name: "webhook-timestamp", In: "header", Required: true, Schema: &huma.Schema{Type: huma.TypeString, Pattern: "^[0-9]+$"},
		Description: "When this attempt was signed, in seconds since the Unix epoch: new on every attempt. Refuse one too far from your clock (the Standard Webhooks libraries allow 5 minutes) to stop replays.",
		Example:     "1767225600"},
	{Name: "webhook-signature", In: "header", Required: true, Schema: &huma.Schema{Type: huma.TypeString},
		Description: "v1, and the base64 HMAC-SHA256 of \"<webhook-id>.<webhook-timestamp>.<body>\" under the endpoint's key (the base64 after whsec_ in its secret). " +
			"During the overlap after a rotation there are two, separated by a space, one per secret: accept the message if any matches, comparing in constant time.",
		Example: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="},
}

// AddWebhookEvents documents every event of the catalogue in the trusted
// contract's webhooks section.
func (s *API) AddWebhookEvents() {
	doc := s.Document(edge.ContractBackend)
	reg := doc.Components.Schemas
	schemas := EventSchemas()
	if doc.Webhooks == nil {
		doc.Webhooks = map[string]*huma.PathItem{}
	}
	actor := reg.Schema(reflect.TypeFor[EventActorJSON](), true, "")
	for _, t := range domain.EventTypes {
		data := reg.Schema(reflect.TypeOf(schemas[t]), true, "")
		payload := &huma.Schema{Type: huma.TypeObject, Required: []string{"type", "timestamp", "data"}, AdditionalProperties: false,
			Properties: map[string]*huma.Schema{
				"type":      {Type: huma.TypeString, Enum: []any{string(t)}, Description: "The event's type."},
				"timestamp": {Type: huma.TypeString, Format: "date-time", Description: "When the change happened (RFC 3339)."},
				"data":      data,
				"actor": {AllOf: []*huma.Schema{actor}, Description: "Present only when the change was made through an impersonation session: " +
					"the user whose session it was and the administrator impersonating them, who made the change."},
			}}
		area, _, _ := strings.Cut(string(t), ".")
		doc.Webhooks[string(t)] = &huma.PathItem{Post: &huma.Operation{
			OperationID: eventOperationID(t),
			Summary:     string(t),
			Description: "Posted to every enabled endpoint whose eventTypes include " + string(t) + " (or are empty), as the change commits. " +
				"data is the " + area + " as the trusted API returns it. Answer 2xx within GATEHOUSE_WEBHOOK_TIMEOUT (15 s); anything else, " +
				"a redirect included, is retried with backoff for about three days, with the same webhook-id. Order is not guaranteed.",
			Tags:       []string{"Webhook events"},
			Parameters: webhookHeaders,
			RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
				"application/json": {Schema: payload}}},
			Responses: map[string]*huma.Response{
				"2XX":     {Description: "Received: the delivery succeeded."},
				"default": {Description: "Not received: the delivery is retried after the schedule's next wait."},
			},
		}}
	}
}

// eventOperationID names event t's entry: user.created is userCreatedEvent.
func eventOperationID(t domain.EventType) string {
	var b strings.Builder
	for i, part := range strings.FieldsFunc(string(t), func(r rune) bool { return r == '.' || r == '_' }) {
		if i > 0 {
			part = strings.ToUpper(part[:1]) + part[1:]
		}
		b.WriteString(part)
	}
	return b.String() + "Event"
}
