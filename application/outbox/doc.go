// Package outbox delivers what the transactional outbox holds: each relay
// claims the waiting messages of one topic (events, mail), hands them to
// its handler, and removes them once handled or schedules them again.
// Several processes may run the same relay on one database: the store's
// claims never overlap, and the messages of a claimer that died are claimed
// again once its lease ends, so delivery is at least once.
//
// One style: a worker, the context's one use case (the single-use-case
// form application's doc.go allows). Relay holds the ports it uses as
// fields and one Pass method (claim a batch, deliver it); bootstrap's job
// list runs one relay per topic, with that topic's handler (the webhook
// fan-out, the mailer). It imports only ports: the stores' wake-up signals
// are ports.OutboxSignals.
package outbox
