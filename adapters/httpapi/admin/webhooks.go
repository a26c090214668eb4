package admin

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// The webhook routes of the admin API (/api/admin/webhooks): the same
// endpoints, deliveries and replays the trusted API serves under
// /api/webhooks, for a platform administrator's session.

// AddWebhookRoutes registers the admin webhook routes.
func (s *API) AddWebhookRoutes() {
	h := edge.WebhookHandlers{Webhooks: s.Webhooks, Caller: func(ctx context.Context, _ domain.Scope) (usecase.Caller, error) {
		return s.AdminRequest(ctx)
	}}
	ops := edge.NewWebhookOperations(edge.AdminBase+"/webhooks", "admin")
	session := func(o huma.Operation, secret bool) huma.Operation {
		o.Security = edge.SessionSecurity
		o.Errors = append(o.Errors, http.StatusUnauthorized, http.StatusForbidden)
		o.Description += " Needs a platform administrator's session: 401 without a session, 403 auth.not_platform_admin for anyone else."
		if secret {
			o.Description += stepUpNote
		}
		return o
	}
	edge.Add(s.routes, edge.ContractAuth, session(ops.Create, true), h.Create)
	edge.Add(s.routes, edge.ContractAuth, session(ops.List, false), h.List)
	edge.Add(s.routes, edge.ContractAuth, session(ops.Get, false), h.Get)
	edge.Add(s.routes, edge.ContractAuth, session(ops.Update, false), h.Update)
	edge.Add(s.routes, edge.ContractAuth, session(ops.Delete, false), h.Delete)
	edge.Add(s.routes, edge.ContractAuth, session(ops.RotateSecret, true), h.RotateSecret)
	edge.Add(s.routes, edge.ContractAuth, session(ops.Messages, false), h.Messages)
	edge.Add(s.routes, edge.ContractAuth, session(ops.Attempts, false), h.Attempts)
	edge.Add(s.routes, edge.ContractAuth, session(ops.Replay, false), h.Replay)
	edge.Add(s.routes, edge.ContractAuth, session(ops.ReplaySince, false), h.ReplaySince)
}
