package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	appadmin "github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/servicekey"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// Administration routes under /api/admin (auth contract, problem+json
// errors) and the service key's own route on the trusted API.

// stepUpNote ends the description of the routes that hand out a secret.
const stepUpNote = " Step-up: an administrator with a second factor (two-factor or a passkey) must have proven one in this session within " +
	"GATEHOUSE_STEP_UP_WINDOW (default 10 minutes), else 403 mfa.step_up_required; answer a code or a passkey in the session, then try again."

// IssuedKeyJSON is a key with its secret, shown once.
type IssuedKeyJSON struct {
	edge.ServiceKeyJSON
	Secret string `json:"secret" doc:"The secret, shown this one time: only its hash is kept. Send it as Authorization: Bearer or x-api-key." example:"gh_sk_…"`
}

// IssuedKeyOutput answers key creation and rotation.
type IssuedKeyOutput struct {
	Status int
	Body   IssuedKeyJSON
}

func issuedKeyOutput(status int, k *servicekey.IssuedKey) *IssuedKeyOutput {
	return &IssuedKeyOutput{Status: status, Body: IssuedKeyJSON{ServiceKeyJSON: edge.ServiceKeyJSONOf(k.Key), Secret: k.Secret}}
}

// CreateServiceKeyInput issues a key.
type CreateServiceKeyInput struct {
	Body struct {
		Name      string     `json:"name" minLength:"1" maxLength:"128" example:"billing backend"`
		Scopes    []string   `json:"scopes" minItems:"1" maxItems:"9" uniqueItems:"true" doc:"users:read, users:write, organizations:read, organizations:write, domains:read, domains:write, webhooks:read, webhooks:write, or * for all."`
		ExpiresAt *time.Time `json:"expiresAt,omitempty" doc:"When the key stops working; absent: never."`
	}
}

func (s *API) createServiceKey(ctx context.Context, in *CreateServiceKeyInput) (*IssuedKeyOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	cmd := servicekey.CreateServiceKey{Name: in.Body.Name, Scopes: in.Body.Scopes}
	if in.Body.ExpiresAt != nil {
		cmd.ExpiresAt = in.Body.ExpiresAt.UTC()
	}
	k, err := s.ServiceKeys.Create(ctx, req, cmd)
	if err != nil {
		return nil, err
	}
	return issuedKeyOutput(http.StatusCreated, k), nil
}

// ServiceKeyListOutput lists keys.
type ServiceKeyListOutput struct {
	Body struct {
		Data []edge.ServiceKeyJSON `json:"data" doc:"Every key, revoked ones included, newest first."`
	}
}

func (s *API) listServiceKeys(ctx context.Context, _ *struct{}) (*ServiceKeyListOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	keys, err := s.ServiceKeys.List(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &ServiceKeyListOutput{}
	out.Body.Data = make([]edge.ServiceKeyJSON, len(keys))
	for i, k := range keys {
		out.Body.Data[i] = edge.ServiceKeyJSONOf(k)
	}
	return out, nil
}

// RotateServiceKeyInput issues a new secret for a key.
type RotateServiceKeyInput struct {
	ID   string `path:"id" minLength:"1" maxLength:"64"`
	Body *struct {
		OverlapSeconds int64 `json:"overlapSeconds,omitempty" minimum:"0" maximum:"2592000" doc:"How long the old secret keeps working (default 0: it stops now; at most 30 days)."`
	}
}

func (s *API) rotateServiceKey(ctx context.Context, in *RotateServiceKeyInput) (*IssuedKeyOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	var overlap time.Duration
	if in.Body != nil {
		overlap = time.Duration(in.Body.OverlapSeconds) * time.Second
	}
	k, err := s.ServiceKeys.Rotate(ctx, req, domain.ServiceKeyID(in.ID), overlap)
	if err != nil {
		return nil, err
	}
	return issuedKeyOutput(http.StatusOK, k), nil
}

// ServiceKeyIDInput names a key in the path.
type ServiceKeyIDInput struct {
	ID string `path:"id" minLength:"1" maxLength:"64"`
}

func (s *API) revokeServiceKey(ctx context.Context, in *ServiceKeyIDInput) (*edge.NoContentOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.ServiceKeys.Revoke(ctx, req, domain.ServiceKeyID(in.ID)); err != nil {
		return nil, err
	}
	return &edge.NoContentOutput{Status: http.StatusNoContent}, nil
}

// AuditLogInput filters and pages the audit log.
type AuditLogInput struct {
	ActorType  string    `query:"actorType" enum:"user,service_key,cli,system" doc:"Only this kind of actor (system: the service itself, such as a webhook endpoint disabled after failing)."`
	ActorID    string    `query:"actorId" maxLength:"64" doc:"Only this actor (a user or service-key id)."`
	Action     string    `query:"action" maxLength:"64" doc:"Only this action, such as admin.ban-user." example:"admin.ban-user"`
	TargetType string    `query:"targetType" maxLength:"32" doc:"Only targets of this type, such as user."`
	TargetID   string    `query:"targetId" maxLength:"128" doc:"Only this target."`
	Since      time.Time `query:"since" doc:"Entries at or after this time (RFC 3339)."`
	Until      time.Time `query:"until" doc:"Entries before this time (RFC 3339)."`
	Cursor     string    `query:"cursor" maxLength:"256" doc:"nextCursor of the previous page."`
	Limit      int       `query:"limit" minimum:"1" maximum:"100" default:"50" doc:"Page size."`
}

// AuditEntryJSON is one audit entry.
type AuditEntryJSON struct {
	ID         string    `json:"id"`
	OccurredAt time.Time `json:"occurredAt"`
	ActorType  string    `json:"actorType" enum:"user,service_key,cli,system"`
	ActorID    string    `json:"actorId"`
	Action     string    `json:"action" example:"admin.ban-user"`
	TargetType string    `json:"targetType" example:"user"`
	TargetID   string    `json:"targetId"`
	RequestID  string    `json:"requestId"`
	IPAddress  string    `json:"ipAddress"`
	Outcome    string    `json:"outcome" enum:"success,denied,failure"`
	Code       string    `json:"code,omitempty" doc:"The error code when the outcome is not success."`
	// ImpersonatorID names the administrator behind an impersonation.
	ImpersonatorID string `json:"impersonatorId,omitempty" doc:"The administrator impersonating the user when the action came through an impersonation session (actorId is then the impersonated user, or the administrator stopping); absent otherwise."`
}

// AuditLogOutput is a page of entries, newest first.
type AuditLogOutput struct {
	Body struct {
		Data       []AuditEntryJSON `json:"data"`
		NextCursor *string          `json:"nextCursor" nullable:"true" doc:"Pass as cursor for the next page; null on the last."`
	}
}

func (s *API) listAuditLog(ctx context.Context, in *AuditLogInput) (*AuditLogOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	page, err := s.AuditLog.List(ctx, p.User, appadmin.ListAuditLog{Cursor: in.Cursor, Filter: ports.AuditQuery{
		ActorType: domain.ActorType(in.ActorType), ActorID: in.ActorID, Action: in.Action, TargetType: in.TargetType, TargetID: in.TargetID,
		Since: in.Since, Until: in.Until, Limit: in.Limit,
	}})
	if err != nil {
		return nil, err
	}
	out := &AuditLogOutput{}
	out.Body.Data = make([]AuditEntryJSON, len(page.Entries))
	for i, e := range page.Entries {
		out.Body.Data[i] = s.auditEntryJSON(e)
	}
	if page.NextCursor != "" {
		out.Body.NextCursor = &page.NextCursor
	}
	return out, nil
}

// auditEntryJSON is e as the admin routes publish it, its code in the
// vocabulary of the contract its actor called.
func (s *API) auditEntryJSON(e domain.AuditEntry) AuditEntryJSON {
	return AuditEntryJSON{ID: e.ID, OccurredAt: e.OccurredAt, ActorType: string(e.ActorType), ActorID: e.ActorID, Action: e.Action,
		TargetType: e.TargetType, TargetID: e.TargetID, RequestID: e.RequestID, IPAddress: e.IPAddress, Outcome: string(e.Outcome), Code: s.auditCode(e.ActorType, e.Code),
		ImpersonatorID: e.ImpersonatorID}
}

// CurrentKeyOutput describes the calling key.
type CurrentKeyOutput struct {
	Body struct {
		ID        string     `json:"id"`
		Name      string     `json:"name"`
		Scopes    []string   `json:"scopes"`
		ExpiresAt *time.Time `json:"expiresAt" nullable:"true"`
	}
}

func (s *API) currentServiceKey(ctx context.Context, _ *struct{}) (*CurrentKeyOutput, error) {
	k, err := s.ServiceKey(ctx, "")
	if err != nil {
		return nil, err
	}
	out := &CurrentKeyOutput{}
	j := edge.ServiceKeyJSONOf(k)
	out.Body.ID, out.Body.Name, out.Body.Scopes, out.Body.ExpiresAt = j.ID, j.Name, j.Scopes, j.ExpiresAt
	return out, nil
}

// addServiceRoutes registers /api/admin/* (auth contract) and the key's own
// route (backend contract).
func (s *API) AddServiceRoutes() {
	type op = huma.Operation
	const (
		tagKeys  = "Service keys"
		tagAudit = "Audit log"
	)
	adminOp := func(o op) op {
		o.Path = edge.AdminBase + o.Path
		o.Security = edge.SessionSecurity
		o.Description += " Needs a platform administrator's session: 401 without a session, 403 for anyone else."
		o.Errors = append(o.Errors, http.StatusUnauthorized, http.StatusForbidden)
		return o
	}
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "createServiceKey", Method: http.MethodPost, Path: "/service-keys", Tags: []string{tagKeys},
		Summary: "Issue a service key", DefaultStatus: http.StatusCreated,
		Description: "Issues a key for a trusted backend. The secret (gh_sk_ and 43 random characters, 256 bits) is in this answer only: storage keeps its SHA-256 hash. Audited." + stepUpNote}),
		s.createServiceKey)
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "listServiceKeys", Method: http.MethodGet, Path: "/service-keys", Tags: []string{tagKeys},
		Summary: "List service keys", Description: "Every key, masked (prefix and last four characters), with scopes, creation, last use, expiry and revocation."}),
		s.listServiceKeys)
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "rotateServiceKey", Method: http.MethodPost, Path: "/service-keys/{id}/rotate", Tags: []string{tagKeys},
		Summary: "Rotate a service key", Errors: []int{http.StatusNotFound},
		Description: "Issues a new secret, shown once. The old secret keeps working for overlapSeconds (default 0), so deployments can switch over. Audited." + stepUpNote}),
		s.rotateServiceKey)
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "revokeServiceKey", Method: http.MethodDelete, Path: "/service-keys/{id}", Tags: []string{tagKeys},
		Summary: "Revoke a service key", DefaultStatus: http.StatusNoContent, Errors: []int{http.StatusNotFound},
		Description: "Revokes the key and all its secrets; the next request with it answers 401. Audited."}),
		s.revokeServiceKey)
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "listAuditLog", Method: http.MethodGet, Path: "/audit-log", Tags: []string{tagAudit},
		Summary: "Read the audit log",
		Description: "Administrative actions and trusted writes, newest first, with who, what, which target, when, the request id, the client address and the outcome " +
			"(refusals included). Filter by actor, action, target and time; page with nextCursor. No route changes or deletes entries."}),
		s.listAuditLog)

	edge.Add(s.routes, edge.ContractBackend, op{OperationID: "currentServiceKey", Method: http.MethodGet, Path: "/api/service-key", Tags: []string{tagKeys},
		Summary: "The calling service key", Security: edge.KeySecurity, Errors: []int{http.StatusUnauthorized, http.StatusTooManyRequests},
		Description: "The key the request was made with: id, name, scopes and expiry. Lets automation check a key before using it. Any scope. " +
			"401 with WWW-Authenticate: Bearer for a missing, unknown, revoked or expired key; 429 with Retry-After past the key's rate budget."},
		s.currentServiceKey)
}
