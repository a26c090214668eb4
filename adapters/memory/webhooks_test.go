package memory_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/ports/conformance"
)

func TestWebhookStores(t *testing.T) {
	conformance.RunWebhookStores(t, func(*testing.T) conformance.WebhookStores {
		db := memory.NewDB()
		q := memory.NewWebhookQueue(db)
		return conformance.WebhookStores{Endpoints: memory.NewWebhookEndpointRepository(db), Queue: q, Log: q, UnitOfWork: memory.NewUnitOfWork(db)}
	})
}
