package edge

import (
	"context"

	"github.com/gatehouse/gatehouse/application/command"
)

// OrgRequest is the signed-in caller of an organization route, or 401.
func (s *Kit) OrgRequest(ctx context.Context) (command.OrgRequest, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return command.OrgRequest{}, err
	}
	return command.OrgRequest{Principal: p, RequestID: RequestIDFrom(ctx), IPAddress: RequestInfoFrom(ctx).ClientIP}, nil
}

// AdminRequest is the signed-in caller of an administration route, or 401.
// Whether they may act is the use case's to decide (403), and to audit.
func (s *Kit) AdminRequest(ctx context.Context) (command.AdminRequest, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return command.AdminRequest{}, err
	}
	return command.AdminRequest{Principal: p, RequestID: RequestIDFrom(ctx), IPAddress: RequestInfoFrom(ctx).ClientIP}, nil
}

// KeyRequest is the administrator's request about service keys, or 401.
func (s *Kit) KeyRequest(ctx context.Context) (command.KeyRequest, error) {
	req, err := s.AdminRequest(ctx)
	if err != nil {
		return command.KeyRequest{}, err
	}
	return command.KeyRequest{Principal: &req.Principal, Actor: req.Actor()}, nil
}
