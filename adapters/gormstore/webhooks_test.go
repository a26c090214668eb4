package gormstore_test

import (
	"testing"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/ports/conformance"
)

func TestWebhookStores(t *testing.T) {
	t.Parallel()
	gormtest.Dialects(t, func(t *testing.T, newURL gormtest.NewURLFunc) {
		newURL = emptiedURL(t, newURL)
		conformance.RunWebhookStores(t, func(t *testing.T) conformance.WebhookStores {
			db := gormtest.Open(t, newURL(t))
			q := gormstore.NewWebhookQueue(db)
			return conformance.WebhookStores{Endpoints: gormstore.NewWebhookEndpointRepository(db), Queue: q, Log: q, UnitOfWork: gormstore.NewUnitOfWork(db)}
		})
	})
}
