package admin_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/adapters/httpapi/admin"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge/edgetest"
	"github.com/gatehouse/gatehouse/adapters/memory"
	appadmin "github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// The audit log, served on memory stores with the one use case it calls:
// a platform administrator reads it, anyone else is refused.
func TestListAuditLog(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	ada, bob := w.MustSignUp(t, "ada@example.com"), w.MustSignUp(t, "bob@example.com")
	log := memory.NewAuditLog(w.DB)
	entry := domain.AuditEntry{ID: "aud_1", OccurredAt: w.Clock.Now(), ActorType: domain.ActorUser, ActorID: string(ada.User.ID()),
		Action: "service-key.create", TargetType: "service_key", TargetID: "key_1", Outcome: domain.OutcomeSuccess}
	if err := log.Append(t.Context(), entry); err != nil {
		t.Fatal(err)
	}
	srv := edgetest.New(edge.Deps{Sessions: w.Sessions})
	adm := admin.New(srv.Kit, admin.Deps{AuditLog: appadmin.NewAuditLog(log, domain.PlatformAdmins{UserIDs: []domain.UserID{ada.User.ID()}})},
		func(_ domain.ActorType, code string) string { return code })
	adm.AddServiceRoutes()

	t.Run("administrator", func(t *testing.T) {
		res := srv.Do(http.MethodGet, "/api/admin/audit-log", "", "Authorization", "Bearer "+ada.Token)
		if res.Code != http.StatusOK {
			t.Fatalf("status %d, want 200: %s", res.Code, res.Body)
		}
		var body struct {
			Data []struct {
				ID     string `json:"id"`
				Action string `json:"action"`
			} `json:"data"`
		}
		if err := json.Unmarshal(res.Body.Bytes(), &body); err != nil {
			t.Fatalf("body %s: %v", res.Body, err)
		}
		if len(body.Data) != 1 || body.Data[0].ID != "aud_1" || body.Data[0].Action != "service-key.create" {
			t.Fatalf("entries %+v, want the one recorded", body.Data)
		}
	})
	t.Run("not_an_administrator", func(t *testing.T) {
		res := srv.Do(http.MethodGet, "/api/admin/audit-log", "", "Authorization", "Bearer "+bob.Token)
		if res.Code != http.StatusForbidden || res.Header().Get("Content-Type") != "application/problem+json" {
			t.Fatalf("status %d (%s), want 403 problem: %s", res.Code, res.Header().Get("Content-Type"), res.Body)
		}
		var p struct {
			Status int    `json:"status"`
			Code   string `json:"code"`
		}
		if err := json.Unmarshal(res.Body.Bytes(), &p); err != nil || p.Status != http.StatusForbidden || p.Code != "auth.not_platform_admin" {
			t.Fatalf("body %s (%v), want code auth.not_platform_admin", res.Body, err)
		}
	})
	t.Run("signed_out", func(t *testing.T) {
		res := srv.Do(http.MethodGet, "/api/admin/audit-log", "")
		if res.Code != http.StatusUnauthorized || !strings.Contains(res.Body.String(), `"status":401`) {
			t.Fatalf("status %d, want 401: %s", res.Code, res.Body)
		}
	})
}
