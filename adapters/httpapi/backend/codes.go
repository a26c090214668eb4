package backend

import (
	"net/http"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/domain"
)

// This file is the trusted API's one vocabulary map (the backend contract's
// users, organizations and domains): where the trusted API answers a
// neutral condition with another code, message, field or status than the
// problem contracts' (edge.ProblemWords), it says so here. The shared use cases
// raise the same neutral conditions for a session and for a service key;
// the trusted API has published its own area.reason codes from the start.

// trustedWord is the trusted API's answer to one neutral code. Fields, when
// not nil, replace the condition's.
type trustedWord struct {
	Status  int
	Code    string
	Message string
	Fields  []domain.FieldViolation
}

// trustedCodes maps neutral codes to the trusted API's answers.
var trustedCodes = map[string]trustedWord{
	// Users (the admin plugin's use cases, called with a service key).
	"admin.user_not_found": {Status: http.StatusNotFound, Code: "user.not_found", Message: "User not found"},
	"user.not_found":       {Status: http.StatusNotFound, Code: "user.not_found", Message: "User not found"},
	"user.email_exists": {Status: http.StatusConflict, Code: "user.email_taken", Message: "Another user has this e-mail address",
		Fields: []domain.FieldViolation{{Field: "email", Message: "is taken by another user"}}},
	"admin.no_data_to_update": {Status: http.StatusBadRequest, Code: "user.no_changes", Message: "Nothing to change",
		Fields: []domain.FieldViolation{{Field: "", Message: "must name at least one field to change"}}},
	"user.invalid_email_filter": {Status: http.StatusBadRequest, Code: "request.invalid_email", Message: "Invalid email"},

	// Organizations, members and invitations (the organization plugin's
	// use cases and the organization stores).
	"organization.unknown":              {Status: http.StatusNotFound, Code: "organization.not_found", Message: "Organization not found"},
	"organization.no_such_member":       {Status: http.StatusNotFound, Code: "organization.member_not_found", Message: "Member not found"},
	"organization.member_not_found":     {Status: http.StatusNotFound, Code: "organization.member_not_found", Message: "Member not found"},
	"organization.invitation_not_found": {Status: http.StatusNotFound, Code: "organization.invitation_not_found", Message: "Invitation not found"},
	"organization.exists":               slugTaken,
	"organization.slug_taken":           slugTaken,
	"organization.already_exists":       slugTaken,
	"organization.slug_unavailable":     slugTaken,
	"organization.already_member":       alreadyMember,
	"organization.user_already_member":  alreadyMember,
	"organization.user_limit_reached": {Status: http.StatusConflict, Code: "organization.limit_reached", Message: "The user belongs to as many organizations as allowed",
		Fields: []domain.FieldViolation{{Field: "ownerUserId", Message: "belongs to as many organizations as allowed"}}},
	"invitation.already_invited": {Status: http.StatusConflict, Code: "organization.already_invited", Message: "The address already has an open invitation",
		Fields: []domain.FieldViolation{{Field: "email", Message: "already has an open invitation; send resend: true to renew it"}}},
	"invitation.limit_reached":          {Status: http.StatusConflict, Code: "organization.invitation_limit_reached", Message: "The organization has as many open invitations as allowed"},
	"organization.member_limit_reached": {Status: http.StatusConflict, Code: "organization.membership_limit_reached", Message: "The organization has as many members as allowed"},
	"organization.owner_required":       {Status: http.StatusConflict, Code: "organization.last_owner", Message: "An organization keeps at least one owner"},
	"invitation.not_open":               {Status: http.StatusConflict, Code: "organization.invitation_not_pending", Message: "The invitation was already accepted, rejected or revoked, or has expired"},
	"role.not_found": {Status: http.StatusBadRequest, Code: "organization.unknown_role", Message: "Unknown role",
		Fields: []domain.FieldViolation{{Field: "role", Message: "must be owner, admin or member, or several of them"}}},
	"invitation.inviter_not_member": {Status: http.StatusBadRequest, Code: "organization.inviter_not_member", Message: "The inviter is not a member of the organization"},
}

var (
	slugTaken = trustedWord{Status: http.StatusConflict, Code: "organization.slug_taken", Message: "Another organization has this slug",
		Fields: []domain.FieldViolation{{Field: "slug", Message: "is taken by another organization"}}}
	alreadyMember = trustedWord{Status: http.StatusConflict, Code: "organization.already_member", Message: "The user is already a member of the organization"}
)

// backendFields renames the fields the shared use cases name after the
// admin plugin's bodies to the trusted API's.
var backendFields = map[string]string{
	"banReason":    "reason",
	"banExpiresIn": "expiresInSeconds",
	"newPassword":  "password",
}

// backendWords is the trusted API's vocabulary: a neutral code's entry in
// trustedCodes, else the problem contracts' (edge.ProblemWords), with the
// trusted API's field names.
var backendWords = edge.WordsFunc(func(c edge.Condition) edge.Condition {
	if w, ok := trustedCodes[c.Code]; ok {
		c.Status, c.Code, c.Message = w.Status, w.Code, w.Message
		if w.Fields != nil {
			c.Fields = w.Fields
		}
	} else {
		c = edge.ProblemWords.Word(c)
	}
	if len(c.Fields) > 0 {
		// A copy: the fields may be a shared sentinel's.
		renamed := make([]domain.FieldViolation, len(c.Fields))
		for i, f := range c.Fields {
			if to, ok := backendFields[f.Field]; ok {
				f.Field = to
			}
			renamed[i] = f
		}
		c.Fields = renamed
	}
	return c
})

// AuditCode is the code the audit log publishes for an entry a service key
// recorded with code: the trusted API's code (what the trusted routes
// recorded before the inner layers spoke neutral codes, so entries old and
// new read alike). It reports false for the conditions the trusted API has
// no word of its own for, and for entries of other actors.
func AuditCode(actor domain.ActorType, code string) (string, bool) {
	if w, ok := trustedCodes[code]; ok && actor == domain.ActorServiceKey {
		return w.Code, true
	}
	return "", false
}
