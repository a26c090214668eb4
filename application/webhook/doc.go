// Package webhook delivers the deployment's events to the endpoints trusted
// backends register, as the Standard Webhooks specification describes:
// Webhooks is the endpoints' management (the trusted API and the admin
// API), Fanout turns each event the outbox holds into one delivery per
// endpoint that wants it, and Sender claims the due deliveries, signs and
// posts them, and retries with backoff.
//
// One style: a service per role, each a struct holding only the ports it
// uses, built by a constructor that panics on a nil dependency
// (usecase.MustHave), with one method per use case taking the caller
// (usecase.Caller) where the use case needs permission. Fanout and Sender
// are workers that bootstrap's job list runs, nothing else: Fanout.Handle
// is the handler of the outbox's events topic, whose relay bootstrap
// builds (this package imports no other context), and Sender.Pass sends
// the due deliveries.
// Settings' zero values take the defaults declared beside them (Default*),
// which bootstrap's settings are written from.
package webhook
