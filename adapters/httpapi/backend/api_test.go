package backend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/httpapi/backend"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge/edgetest"
	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/application/organization"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// keyring authenticates the service keys it holds, by secret.
type keyring map[string]*domain.ServiceKey

func (k keyring) Authenticate(_ context.Context, secret string) (*domain.ServiceKey, error) {
	if key, ok := k[secret]; ok {
		return key, nil
	}
	return nil, domain.NewError(domain.KindUnauthenticated, "auth.invalid_service_key", "The service key is missing, unknown, revoked or expired")
}

type sequence struct{ n int }

func (s *sequence) NewID() string { s.n++; return fmt.Sprintf("id_%d", s.n) }

func mustKey(t *testing.T, name string, scope domain.Scope) (string, *domain.ServiceKey) {
	t.Helper()
	secret := domain.ServiceKeyPrefix + strings.Repeat(name[:1], domain.ServiceKeySecretLength)
	k, err := domain.NewServiceKey(domain.ServiceKeyID("key_"+name), name, []domain.Scope{scope}, secret, "test", time.Time{}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return secret, k
}

// An organization read through the trusted API, served on memory stores
// with the one use case it calls: a key with organizations:read reads it, a
// key without is refused before the use case runs, and no key is 401.
func TestGetOrganization(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	ada := w.MustSignUp(t, "ada@example.com")
	orgs := memory.NewOrganizationRepository(w.DB)
	org, err := domain.NewOrganization("org_acme", "Acme", "acme", "", "", w.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	owner, err := domain.NewMember("mem_ada", org.ID(), ada.User.ID(), []domain.OrgRole{domain.OrgRoleOwner}, w.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := orgs.Create(t.Context(), org, owner); err != nil {
		t.Fatal(err)
	}
	reader, readKey := mustKey(t, "reader", domain.ScopeOrganizationsRead)
	other, otherKey := mustKey(t, "users", domain.ScopeUsersRead)
	srv := edgetest.New(edge.Deps{ServiceKeys: keyring{reader: readKey, other: otherKey}})
	trusted := backend.New(srv.Kit, backend.Deps{Organizations: organization.NewOrganizations(orgs, w.Users, memory.NewSessionRepository(w.DB),
		w.Mail, w.AuditorOf(memory.NewAuditLog(w.DB)), memory.NewPasskeyRepository(w.DB), &sequence{}, w.Clock, organization.OrganizationSettings{})})
	trusted.AddBackendOrganizationRoutes()

	t.Run("key_with_the_scope", func(t *testing.T) {
		res := srv.Do(http.MethodGet, "/api/organizations/org_acme", "", "Authorization", "Bearer "+reader)
		if res.Code != http.StatusOK {
			t.Fatalf("status %d, want 200: %s", res.Code, res.Body)
		}
		var body backend.BackendOrganizationJSON
		if err := json.Unmarshal(res.Body.Bytes(), &body); err != nil {
			t.Fatalf("body %s: %v", res.Body, err)
		}
		if body.ID != "org_acme" || body.Slug != "acme" || body.MemberCount != 1 {
			t.Fatalf("organization %+v, want acme with its one member", body)
		}
	})
	t.Run("key_without_the_scope", func(t *testing.T) {
		res := srv.Do(http.MethodGet, "/api/organizations/org_acme", "", "x-api-key", other)
		if res.Code != http.StatusForbidden {
			t.Fatalf("status %d, want 403: %s", res.Code, res.Body)
		}
		var p struct {
			Code string `json:"code"`
		}
		if err := json.Unmarshal(res.Body.Bytes(), &p); err != nil || p.Code != "auth.insufficient_scope" {
			t.Fatalf("body %s (%v), want code auth.insufficient_scope", res.Body, err)
		}
	})
	t.Run("no_key", func(t *testing.T) {
		res := srv.Do(http.MethodGet, "/api/organizations/org_acme", "")
		if res.Code != http.StatusUnauthorized || !strings.HasPrefix(res.Header().Get("WWW-Authenticate"), `Bearer realm="gatehouse", error="invalid_token"`) {
			t.Fatalf("status %d, WWW-Authenticate %q, want 401 with a Bearer challenge: %s", res.Code, res.Header().Get("WWW-Authenticate"), res.Body)
		}
	})
}
