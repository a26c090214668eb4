package bootstrap

import (
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/ports"
)

// faultyEvents is usecase.NewEvents writing to the outbox f wraps.
func faultyEvents(f Fakes, uow ports.UnitOfWork, outbox ports.Outbox, encoder ports.EventEncoder, ids ports.IDGenerator, clock ports.Clock,
	passkeys ports.PasskeyRepository, linked ports.LinkedAccountRepository, orgs ports.OrganizationRepository) *usecase.Events {
	if f.Outbox != nil {
		outbox = f.Outbox(outbox)
	}
	return usecase.NewEvents(uow, outbox, encoder, ids, clock, passkeys, linked, orgs)
}

// faultyAuditor is usecase.NewAuditor writing to the audit log f wraps.
func faultyAuditor(f Fakes, log ports.AuditLog, events *usecase.Events, ids ports.IDGenerator, clock ports.Clock) usecase.Auditor {
	if f.AuditLog != nil {
		log = f.AuditLog(log)
	}
	return usecase.NewAuditor(log, events, ids, clock)
}
