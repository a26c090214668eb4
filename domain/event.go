package domain

// EventType names something that happened, as trusted backends receive it
// in webhooks: "user.created", "domain.verified"… The catalogue below is the
// whole set; a webhook endpoint filters on these names.
type EventType string

// The event catalogue. Each is written in the same transaction as the change
// it reports (see ports.UnitOfWork and ports.Outbox).
const (
	EventUserCreated  EventType = "user.created"
	EventUserUpdated  EventType = "user.updated"
	EventUserDeleted  EventType = "user.deleted"
	EventUserBanned   EventType = "user.banned"
	EventUserUnbanned EventType = "user.unbanned"

	EventSessionCreated EventType = "session.created"
	EventSessionRevoked EventType = "session.revoked"

	EventOrganizationCreated EventType = "organization.created"
	EventOrganizationUpdated EventType = "organization.updated"
	EventOrganizationDeleted EventType = "organization.deleted"

	EventMemberAdded       EventType = "member.added"
	EventMemberRoleChanged EventType = "member.role_changed"
	EventMemberRemoved     EventType = "member.removed"

	EventInvitationCreated  EventType = "invitation.created"
	EventInvitationAccepted EventType = "invitation.accepted"
	EventInvitationRejected EventType = "invitation.rejected"
	EventInvitationCanceled EventType = "invitation.canceled"

	EventDomainCreated  EventType = "domain.created"
	EventDomainVerified EventType = "domain.verified"
	EventDomainFailed   EventType = "domain.failed"
	EventDomainDeleted  EventType = "domain.deleted"

	EventServiceKeyCreated EventType = "service_key.created"
	EventServiceKeyRevoked EventType = "service_key.revoked"

	EventFactorEnabled  EventType = "factor.enabled"
	EventFactorDisabled EventType = "factor.disabled"

	EventAccountLinked   EventType = "account.linked"
	EventAccountUnlinked EventType = "account.unlinked"
)

// EventTypes is the catalogue in a stable order: the order of the
// documentation and of the contract's webhooks section.
var EventTypes = []EventType{
	EventUserCreated, EventUserUpdated, EventUserDeleted, EventUserBanned, EventUserUnbanned,
	EventSessionCreated, EventSessionRevoked,
	EventOrganizationCreated, EventOrganizationUpdated, EventOrganizationDeleted,
	EventMemberAdded, EventMemberRoleChanged, EventMemberRemoved,
	EventInvitationCreated, EventInvitationAccepted, EventInvitationRejected, EventInvitationCanceled,
	EventDomainCreated, EventDomainVerified, EventDomainFailed, EventDomainDeleted,
	EventServiceKeyCreated, EventServiceKeyRevoked,
	EventFactorEnabled, EventFactorDisabled,
	EventAccountLinked, EventAccountUnlinked,
}

// KnownEventType reports whether t is in the catalogue.
func KnownEventType(t EventType) bool {
	for _, k := range EventTypes {
		if k == t {
			return true
		}
	}
	return false
}

// FactorChange is the data of factor.enabled and factor.disabled: which
// second factor of which user changed.
type FactorChange struct {
	UserID UserID
	// Factor is one of the factor names below (FactorTOTP, …).
	Factor string
	// PasskeyID names the passkey, for passkey changes.
	PasskeyID string
}

// The second factors' names, as factor events and the audit log name them.
const (
	FactorTOTP        = "totp"
	FactorBackupCodes = "backup_codes"
	FactorPasskey     = "passkey"
	FactorEmailOTP    = "email_otp"
)
