package edge

import (
	"context"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// OrgRequest is the signed-in caller of an organization route, or 401.
func (s *Kit) OrgRequest(ctx context.Context) (usecase.OrgRequest, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return usecase.OrgRequest{}, err
	}
	return usecase.OrgRequest{Principal: p, RequestID: RequestIDFrom(ctx), IPAddress: RequestInfoFrom(ctx).ClientIP}, nil
}

// AdminRequest is the signed-in caller of an administration route, or 401.
// Whether they may act is the use case's to decide (403), and to audit.
func (s *Kit) AdminRequest(ctx context.Context) (usecase.AdminRequest, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return usecase.AdminRequest{}, err
	}
	return usecase.AdminRequest{Principal: p, RequestID: RequestIDFrom(ctx), IPAddress: RequestInfoFrom(ctx).ClientIP}, nil
}

// Origin is the request's id and client address, for the audit log of a
// signed-in user's own changes (usecase.Auditor.RecordSelf).
func Origin(ctx context.Context) usecase.Origin {
	return usecase.Origin{RequestID: RequestIDFrom(ctx), IPAddress: RequestInfoFrom(ctx).ClientIP}
}

// KeyRequest is the administrator's request about service keys, or 401.
func (s *Kit) KeyRequest(ctx context.Context) (usecase.KeyRequest, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return usecase.KeyRequest{}, err
	}
	return usecase.KeyRequest{Principal: &req.Principal, Actor: req.Actor()}, nil
}

// ServiceKey authenticates the request's service key, from Authorization:
// Bearer or x-api-key (never the query string; cookies are ignored), counts
// the request against the key's budget (429 past it), and refuses the key
// without scope (403). Refusals carry WWW-Authenticate: Bearer. Requests
// whose key is refused count against their address instead.
func (s *Kit) ServiceKey(ctx context.Context, scope domain.Scope) (*domain.ServiceKey, error) {
	r := RequestInfoFrom(ctx).Request
	secret := strings.TrimSpace(r.Header.Get("x-api-key"))
	if auth := r.Header.Get("Authorization"); secret == "" && len(auth) > 7 && strings.EqualFold(auth[:7], "bearer ") {
		secret = strings.TrimSpace(auth[7:])
	}
	k, err := s.authenticateKey(ctx, secret)
	if err != nil {
		if domain.KindOf(err) == domain.KindUnauthenticated {
			if err := s.ThrottleRefusedKey(ctx); err != nil {
				return nil, err
			}
			return nil, huma.ErrorWithHeaders(RenderError(ctx, LoggerFrom(ctx), err),
				http.Header{"WWW-Authenticate": {`Bearer realm="gatehouse", error="invalid_token", resource_metadata="` + s.ResourceMetadataURL() + `"`}})
		}
		return nil, err
	}
	if err := s.ThrottleServiceKey(ctx, k.ID()); err != nil {
		return nil, err
	}
	if scope != "" && !k.HasScope(scope) {
		return nil, domain.NewError(domain.KindForbidden, "auth.insufficient_scope", "The service key lacks the scope "+string(scope))
	}
	return k, nil
}
