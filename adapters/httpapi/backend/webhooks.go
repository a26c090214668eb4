package backend

import (
	"context"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// The webhook routes (/api/webhooks): a trusted backend registers the
// endpoints the deployment's events are posted to, reads how deliveries
// go, rotates secrets and replays (webhooks:read, webhooks:write). The
// admin API serves the same under /api/admin/webhooks; the rules live in
// webhook.Webhooks and the shared handlers in edge.

// AddWebhookRoutes registers the trusted webhook routes.
func (s *API) AddWebhookRoutes() {
	h := edge.WebhookHandlers{Webhooks: s.Webhooks, Caller: func(ctx context.Context, scope domain.Scope) (usecase.Caller, error) {
		return s.trustedRequest(ctx, scope)
	}}
	ops := edge.NewWebhookOperations("/api/webhooks", "")
	read, write := domain.ScopeWebhooksRead, domain.ScopeWebhooksWrite
	registerTrusted(s, write, ops.Create, h.Create)
	registerTrusted(s, read, ops.List, h.List)
	registerTrusted(s, read, ops.Get, h.Get)
	registerTrusted(s, write, ops.Update, h.Update)
	registerTrusted(s, write, ops.Delete, h.Delete)
	registerTrusted(s, write, ops.RotateSecret, h.RotateSecret)
	registerTrusted(s, read, ops.Messages, h.Messages)
	registerTrusted(s, read, ops.Attempts, h.Attempts)
	registerTrusted(s, write, ops.Replay, h.Replay)
	registerTrusted(s, write, ops.ReplaySince, h.ReplaySince)
}
