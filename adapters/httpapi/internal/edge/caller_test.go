package edge_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge/edgetest"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// countingSessions resolves every token to one user and counts the
// lookups.
type countingSessions struct{ lookups int }

func (c *countingSessions) Authenticate(_ context.Context, cmd account.Authenticate) (*account.AuthenticateResult, error) {
	c.lookups++
	if cmd.Token == "" {
		return nil, usecase.ErrUnauthorized
	}
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	u, err := domain.NewUser("usr_ada", "Ada", "ada@example.com", now)
	if err != nil {
		return nil, err
	}
	s := domain.NewSession("ses_1", u.ID(), domain.HashToken(cmd.Token), true, "", "", domain.SessionPolicy{Lifetime: time.Hour}, now)
	return &account.AuthenticateResult{Principal: usecase.Principal{Session: s, User: u}}, nil
}

func (c *countingSessions) Refresh(context.Context, *account.AuthenticateResult) error { return nil }

// The caller is resolved when a handler first asks, once per request: a
// route that never asks costs no lookup, and asking again costs none.
func TestCallers_resolve_once_and_only_when_asked(t *testing.T) {
	sessions := &countingSessions{}
	srv := edgetest.New(edge.Deps{Sessions: sessions})
	srv.Kit.Handle(http.MethodGet, "/never", edge.Policy{}, func(c *gin.Context) { c.Status(http.StatusNoContent) })
	srv.Kit.Handle(http.MethodGet, "/twice", edge.Policy{}, func(c *gin.Context) {
		for range 2 {
			if _, err := srv.Kit.Principal(c.Request.Context()); err != nil {
				c.Status(http.StatusUnauthorized)
				return
			}
		}
		if _, err := srv.Kit.Session(c.Request.Context()); err != nil {
			c.Status(http.StatusInternalServerError)
			return
		}
		c.Status(http.StatusNoContent)
	})
	token := "Bearer " + "abcdefghijklmnopqrstuvwxyz012345"

	if res := srv.Do(http.MethodGet, "/never", "", "Authorization", token); res.Code != http.StatusNoContent || sessions.lookups != 0 {
		t.Fatalf("a route that never asks: status %d, %d lookups; want 204 and none", res.Code, sessions.lookups)
	}
	if res := srv.Do(http.MethodGet, "/twice", "", "Authorization", token); res.Code != http.StatusNoContent || sessions.lookups != 1 {
		t.Fatalf("asking three times: status %d, %d lookups; want 204 and one", res.Code, sessions.lookups)
	}
	if res := srv.Do(http.MethodGet, "/twice", ""); res.Code != http.StatusUnauthorized || sessions.lookups != 1 {
		t.Fatalf("no token: status %d, %d lookups; want 401 and no lookup", res.Code, sessions.lookups)
	}
}
