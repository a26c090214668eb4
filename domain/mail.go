package domain

import "time"

// MailKind says which message to send.
type MailKind string

// The messages Gatehouse sends.
const (
	MailVerifyEmail   MailKind = "verify-email"    // confirm the address of a new account
	MailChangeEmail   MailKind = "change-email"    // confirm a new address
	MailResetPassword MailKind = "reset-password"  // a link to set a new password
	MailDeleteUser    MailKind = "delete-user"     // confirm deleting the account
	MailAccountExists MailKind = "account-exists"  // someone tried to sign up with this address
	MailInvitation    MailKind = "invitation"      // an invitation to join an organization
	MailTwoFactorCode MailKind = "two-factor-code" // a one-time code that answers a sign-in's second factor
	MailFactorsReset  MailKind = "factors-reset"   // an operator removed the user's second factors and passkeys
	// MailWebhookDisabled tells a platform administrator that a webhook
	// endpoint was disabled after failing for days.
	MailWebhookDisabled MailKind = "webhook-disabled"
)

// Mail is one message to one recipient. Link is the one-time link to follow
// (empty for MailAccountExists and MailFactorsReset); ExpiresIn says how
// long it works.
type Mail struct {
	Kind      MailKind
	To        Email
	Name      string
	Link      string
	ExpiresIn time.Duration
	// Organization and Inviter name the organization and the member who
	// invited the recipient (MailInvitation only).
	Organization string
	Inviter      string
	// Code is the one-time code of MailTwoFactorCode, which has no Link.
	Code string
	// WebhookID and WebhookURL name the endpoint of MailWebhookDisabled.
	WebhookID  string
	WebhookURL string
}
