package bootstrap

import (
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/ports"
)

// Faults wrap the audit log and the outbox that the changes write to, for
// the tests that make those writes fail (InitializeMemoryWithFaults). A nil
// func leaves the store's own.
type Faults struct {
	AuditLog func(ports.AuditLog) ports.AuditLog
	Outbox   func(ports.Outbox) ports.Outbox
}

// faultyEvents is usecase.NewEvents writing to the outbox f wraps.
func faultyEvents(f Faults, uow ports.UnitOfWork, outbox ports.Outbox, encoder ports.EventEncoder, ids ports.IDGenerator, clock ports.Clock,
	passkeys ports.PasskeyRepository, linked ports.LinkedAccountRepository, orgs ports.OrganizationRepository) *usecase.Events {
	if f.Outbox != nil {
		outbox = f.Outbox(outbox)
	}
	return usecase.NewEvents(uow, outbox, encoder, ids, clock, passkeys, linked, orgs)
}

// faultyAuditor is usecase.NewAuditor writing to the audit log f wraps.
func faultyAuditor(f Faults, log ports.AuditLog, events *usecase.Events, ids ports.IDGenerator, clock ports.Clock) usecase.Auditor {
	if f.AuditLog != nil {
		log = f.AuditLog(log)
	}
	return usecase.NewAuditor(log, events, ids, clock)
}
