package bootstrap

import (
	"github.com/google/wire"

	"github.com/gatehouse/gatehouse/adapters/httpapi/backend"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/ports"
)

// eventsSet provides what every change writes with: the events writer (on
// the store's unit of work and outbox, encoding with the trusted API's
// objects) and the auditor.
var eventsSet = wire.NewSet(usecase.NewEvents, usecase.NewAuditor, encoderSet)

// encoderSet encodes events as the trusted API presents their data.
var encoderSet = wire.NewSet(backend.NewEventEncoder, wire.Bind(new(ports.EventEncoder), new(*backend.EventEncoder)))

// Faults wrap the audit log and the outbox that the changes write to, for
// the tests that make those writes fail (InitializeMemoryWithFaults). A nil
// func leaves the store's own.
type Faults struct {
	AuditLog func(ports.AuditLog) ports.AuditLog
	Outbox   func(ports.Outbox) ports.Outbox
}

// faultSet is eventsSet with Faults applied.
var faultSet = wire.NewSet(faultyEvents, faultyAuditor, encoderSet)

func faultyEvents(f Faults, uow ports.UnitOfWork, outbox ports.Outbox, encoder ports.EventEncoder, ids ports.IDGenerator, clock ports.Clock,
	passkeys ports.PasskeyRepository, linked ports.LinkedAccountRepository, orgs ports.OrganizationRepository) *usecase.Events {
	if f.Outbox != nil {
		outbox = f.Outbox(outbox)
	}
	return usecase.NewEvents(uow, outbox, encoder, ids, clock, passkeys, linked, orgs)
}

func faultyAuditor(f Faults, log ports.AuditLog, events *usecase.Events, ids ports.IDGenerator, clock ports.Clock) usecase.Auditor {
	if f.AuditLog != nil {
		log = f.AuditLog(log)
	}
	return usecase.NewAuditor(log, events, ids, clock)
}
