package ports

import "time"

// SignInMethod is how a sign-in was attempted, as the metrics count it.
type SignInMethod string

// The sign-in methods observed.
const (
	SignInPassword     SignInMethod = "password"      // e-mail and password
	SignInSecondFactor SignInMethod = "second_factor" // the code that completes a password sign-in
	SignInPasskey      SignInMethod = "passkey"       // a discoverable passkey ceremony
)

// SignInOutcome is how a sign-in ended, as the metrics count it. The client
// is told less: an unknown address, a wrong password and a locked account
// answer alike, and only the operator's metrics tell them apart.
type SignInOutcome string

// The sign-in outcomes observed.
const (
	SignInSuccess              SignInOutcome = "success"                // a session was started
	SignInSecondFactorRequired SignInOutcome = "second_factor_required" // the password was right; a code is asked for
	SignInFailure              SignInOutcome = "failure"                // wrong or unknown credentials, a wrong or expired code, bad input
	SignInLocked               SignInOutcome = "locked"                 // refused because the account's password is locked
	SignInBanned               SignInOutcome = "banned"
	SignInEmailNotVerified     SignInOutcome = "email_not_verified"
	SignInSSORequired          SignInOutcome = "sso_required" // the address must use its organization's identity provider
	SignInError                SignInOutcome = "error"        // the service failed (database, internal error)
)

// The webhook delivery outcomes observed (Observer.WebhookDelivery, and
// WebhookObserver, which the delivery use case sees it as). Any other value
// is counted as "other".
const (
	WebhookSucceeded = "succeeded" // the endpoint answered 2xx
	WebhookRetrying  = "retrying"  // a non-2xx answer, a timeout, a network error or a refused target: retried
	WebhookFailed    = "failed"    // the last attempt of the schedule failed
	WebhookSkipped   = "skipped"   // the endpoint was disabled meanwhile: failed without an attempt
)

// Observer counts what the service does, for the operator's metrics. Every
// argument is one of a small fixed set of values (a route template, a rule
// name, one of the constants above), never a raw path, an address or an
// e-mail, so the number of series stays bounded. Implementations must be
// safe for concurrent use and must not block.
type Observer interface {
	// Request counts one answered HTTP request: its method, its route
	// template ("" when no route matched), its status and how long it took.
	Request(method, route string, status int, elapsed time.Duration)
	// SignIn counts one sign-in attempt that reached the application.
	SignIn(method SignInMethod, outcome SignInOutcome)
	// RateLimited counts one request refused by the rate-limit rule named.
	RateLimited(rule string)
	// WebhookDelivery counts one webhook delivery attempt by its outcome
	// (WebhookSucceeded, WebhookRetrying, WebhookFailed, WebhookSkipped).
	WebhookDelivery(outcome string)
}
