package backend

import (
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// The events' webhook payloads: {"type", "timestamp", "data"}, where data
// is the object the trusted API returns for the thing that changed. The
// sessions, factors and linked accounts, which the trusted API shows only
// inside a user (or not at all), have an object of their own here.

// EventPayload is the body of a webhook: one event of the catalogue.
type EventPayload struct {
	Type      domain.EventType `json:"type" doc:"The event's type, such as user.created."`
	Timestamp time.Time        `json:"timestamp" doc:"When the change happened (RFC 3339)."`
	Data      any              `json:"data" doc:"What changed, as the trusted API returns it."`
	Actor     *EventActorJSON  `json:"actor,omitempty" doc:"Present only when the change was made through an impersonation session: the user whose session it was and the administrator impersonating them."`
}

// EventActorJSON names who made a change through an impersonation session.
type EventActorJSON struct {
	UserID         string `json:"userId" doc:"The impersonated user, whose session it was."`
	ImpersonatedBy string `json:"impersonatedBy" doc:"The administrator impersonating them, who made the change."`
}

// BackendSessionJSON is a session in the session events: never its token.
type BackendSessionJSON struct {
	ID             string    `json:"id" doc:"The session's identifier."`
	UserID         string    `json:"userId" doc:"Whose session it is."`
	CreatedAt      time.Time `json:"createdAt" doc:"When the user signed in."`
	ExpiresAt      time.Time `json:"expiresAt" doc:"When the session ends unless refreshed."`
	IPAddress      string    `json:"ipAddress" doc:"The client address it was created from." example:"203.0.113.7"`
	UserAgent      string    `json:"userAgent" doc:"The User-Agent it was created with."`
	AuthMethods    []string  `json:"authMethods" nullable:"false" doc:"How the user proved who they are, as RFC 8176 amr values (pwd, otp, hwk, swk, user, mfa); empty for an impersonation."`
	ImpersonatedBy *string   `json:"impersonatedBy" nullable:"true" doc:"The administrator impersonating the user in this session, or null."`
}

func backendSessionJSON(s *domain.Session) BackendSessionJSON {
	out := BackendSessionJSON{ID: string(s.ID()), UserID: string(s.UserID()), CreatedAt: s.CreatedAt(), ExpiresAt: s.ExpiresAt(),
		IPAddress: s.IPAddress(), UserAgent: s.UserAgent(), AuthMethods: s.Authentication().MethodNames()}
	if out.AuthMethods == nil {
		out.AuthMethods = []string{}
	}
	if by := s.ImpersonatedBy(); by != "" {
		id := string(by)
		out.ImpersonatedBy = &id
	}
	return out
}

// FactorJSON is a second factor in the factor events: which one of which
// user, never a secret.
type FactorJSON struct {
	UserID    string  `json:"userId"`
	Factor    string  `json:"factor" enum:"totp,backup_codes,passkey,email_otp" doc:"totp: an authenticator app; backup_codes: the one-time backup codes (enabled when issued anew); passkey: one passkey; email_otp: codes mailed to the user's address."`
	PasskeyID *string `json:"passkeyId" nullable:"true" doc:"The passkey's credential id (base64url), for passkey events; null otherwise."`
}

func factorJSON(c domain.FactorChange) FactorJSON {
	out := FactorJSON{UserID: string(c.UserID), Factor: c.Factor}
	if c.PasskeyID != "" {
		id := c.PasskeyID
		out.PasskeyID = &id
	}
	return out
}

// LinkedAccountEventJSON is a linked account in the account events: the
// trusted user's linkedAccounts item with its user.
type LinkedAccountEventJSON struct {
	UserID string `json:"userId" doc:"The user the account is linked to."`
	LinkedAccountJSON
}

// linkedAccountJSON presents a's public part, never its tokens.
func linkedAccountJSON(a domain.LinkedAccount) LinkedAccountJSON {
	return LinkedAccountJSON{ID: string(a.ID), ProviderID: string(a.ProviderID), AccountID: a.Subject, Email: a.Email,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
}

// EventSchemas is the event catalogue with a zero value of each event's
// data type: the webhooks section of the trusted contract documents each
// event from it, and EventEncoder answers each event in it.
func EventSchemas() map[domain.EventType]any {
	user, session, org, member := BackendUserJSON{}, BackendSessionJSON{}, BackendOrganizationJSON{}, BackendMemberJSON{}
	invitation, dom, key := BackendInvitationJSON{}, edge.DomainJSON{}, edge.ServiceKeyJSON{}
	factor, account := FactorJSON{}, LinkedAccountEventJSON{}
	return map[domain.EventType]any{
		domain.EventUserCreated: user, domain.EventUserUpdated: user, domain.EventUserDeleted: user,
		domain.EventUserBanned: user, domain.EventUserUnbanned: user,
		domain.EventSessionCreated: session, domain.EventSessionRevoked: session,
		domain.EventOrganizationCreated: org, domain.EventOrganizationUpdated: org, domain.EventOrganizationDeleted: org,
		domain.EventMemberAdded: member, domain.EventMemberRoleChanged: member, domain.EventMemberRemoved: member,
		domain.EventInvitationCreated: invitation, domain.EventInvitationAccepted: invitation,
		domain.EventInvitationRejected: invitation, domain.EventInvitationCanceled: invitation,
		domain.EventDomainCreated: dom, domain.EventDomainVerified: dom, domain.EventDomainFailed: dom, domain.EventDomainDeleted: dom,
		domain.EventServiceKeyCreated: key, domain.EventServiceKeyRevoked: key,
		domain.EventFactorEnabled: factor, domain.EventFactorDisabled: factor,
		domain.EventAccountLinked: account, domain.EventAccountUnlinked: account,
	}
}

// EventEncoder encodes events as their webhook payloads (EventPayload).
type EventEncoder struct {
	schemas map[domain.EventType]any
}

var _ ports.EventEncoder = (*EventEncoder)(nil)

// NewEventEncoder returns the encoder of the trusted API's objects.
func NewEventEncoder() *EventEncoder { return &EventEncoder{schemas: EventSchemas()} }

// Encode implements ports.EventEncoder. An event outside the catalogue, or
// whose data is not the kind its type carries, is domain.KindInternal.
func (enc *EventEncoder) Encode(e ports.Event) ([]byte, error) {
	want, ok := enc.schemas[e.Type]
	if !ok {
		return nil, domain.Internal("events: encode", fmt.Errorf("unknown event type %q", e.Type))
	}
	data, err := presentEvent(e.Data)
	if err != nil {
		return nil, err
	}
	if reflect.TypeOf(data) != reflect.TypeOf(want) {
		return nil, domain.Internal("events: encode", fmt.Errorf("%s carries %T, not %T", e.Type, e.Data, want))
	}
	out := EventPayload{Type: e.Type, Timestamp: e.OccurredAt.UTC(), Data: data}
	if e.Actor != nil {
		out.Actor = &EventActorJSON{UserID: string(e.Actor.UserID), ImpersonatedBy: string(e.Actor.ImpersonatedBy)}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, domain.Internal("events: encode", err)
	}
	return b, nil
}

// presentEvent turns an event's data into the trusted API's object.
func presentEvent(data any) (any, error) {
	switch d := data.(type) {
	case ports.UserEventData:
		out := backendUserJSON(d.User, d.Passkeys, nil)
		for _, a := range d.LinkedAccounts {
			out.LinkedAccounts = append(out.LinkedAccounts, linkedAccountJSON(a))
		}
		return out, nil
	case *domain.Session:
		return backendSessionJSON(d), nil
	case ports.OrganizationWithCount:
		return backendOrganizationJSON(d), nil
	case ports.MemberWithUser:
		return backendMemberJSON(d), nil
	case *domain.Invitation:
		return backendInvitationJSON(d), nil
	case *domain.Domain:
		return edge.DomainJSONOf(d), nil
	case *domain.ServiceKey:
		return edge.ServiceKeyJSONOf(d), nil
	case domain.FactorChange:
		return factorJSON(d), nil
	case domain.LinkedAccount:
		return LinkedAccountEventJSON{UserID: string(d.UserID), LinkedAccountJSON: linkedAccountJSON(d)}, nil
	}
	return nil, domain.Internal("events: encode", fmt.Errorf("no presentation of %T", data))
}
