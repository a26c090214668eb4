package httpapi

import (
	"context"

	"github.com/gatehouse/gatehouse/application/command"
)

// orgRequest is the signed-in caller of an organization route, or 401.
func (s *Server) orgRequest(ctx context.Context) (command.OrgRequest, error) {
	p, err := s.principal(ctx)
	if err != nil {
		return command.OrgRequest{}, err
	}
	return command.OrgRequest{Principal: p, RequestID: RequestIDFrom(ctx), IPAddress: requestInfoFrom(ctx).clientIP}, nil
}

// adminRequest is the signed-in caller of an administration route, or 401.
// Whether they may act is the use case's to decide (403), and to audit.
func (s *Server) adminRequest(ctx context.Context) (command.AdminRequest, error) {
	p, err := s.principal(ctx)
	if err != nil {
		return command.AdminRequest{}, err
	}
	return command.AdminRequest{Principal: p, RequestID: RequestIDFrom(ctx), IPAddress: requestInfoFrom(ctx).clientIP}, nil
}
