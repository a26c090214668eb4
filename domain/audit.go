package domain

import "time"

// ActorType says what kind of actor did something.
type ActorType string

// The actor types.
const (
	ActorUser       ActorType = "user"        // a signed-in user (a platform or organization administrator)
	ActorServiceKey ActorType = "service_key" // a trusted backend
	ActorCLI        ActorType = "cli"         // the command line on the server
	ActorSystem     ActorType = "system"      // the service itself (a webhook endpoint disabled after failing)
)

// Outcome says how an audited action ended.
type Outcome string

// The outcomes.
const (
	OutcomeSuccess Outcome = "success"
	OutcomeDenied  Outcome = "denied"  // the actor was not allowed
	OutcomeFailure Outcome = "failure" // the request was refused for another reason
)

// OutcomeOf classifies the error an action ended with.
func OutcomeOf(err error) Outcome {
	switch {
	case err == nil:
		return OutcomeSuccess
	case KindOf(err) == KindForbidden || KindOf(err) == KindUnauthenticated:
		return OutcomeDenied
	default:
		return OutcomeFailure
	}
}

// AuditEntry records one administrative action or trusted write. Entries are
// append-only: nothing changes or deletes them.
type AuditEntry struct {
	ID         string
	OccurredAt time.Time
	ActorType  ActorType
	ActorID    string
	Action     string // such as "admin.ban-user" or "service-key.create"
	TargetType string // such as "user", "organization", "service_key"
	TargetID   string
	RequestID  string
	IPAddress  string
	Outcome    Outcome
	// Code is the error code when the outcome is not success.
	Code string
	// ImpersonatorID is the administrator behind the impersonation session
	// the action came through (domain.Session.ImpersonatedBy), "" when it
	// came through none: ActorID is then the impersonated user (or, for
	// stopping, the administrator), and the entry names both.
	ImpersonatorID string
}

// The errors the stores return for this aggregate, created once so that
// every store answers each condition with the same kind, code and message.
var (
	ErrAuditEntryExists = NewError(KindConflict, "audit.exists", "an audit entry with this id already exists")
)
