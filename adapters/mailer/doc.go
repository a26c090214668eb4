// Package mailer implements ports.Mailer: SMTP sends real mail through
// go-mail, Log writes the mail to the log for local development, and Outbox
// keeps each mail, sealed, in the transactional outbox, from which the mail
// relay delivers it through either, so that how long a request takes never
// reveals whether a mail was sent and no mail is lost when the process
// stops or the SMTP server is down. Render turns a domain.Mail into a
// subject and plain-text and HTML bodies from the embedded templates.
//
// The smtptest package is a real SMTP server on loopback for tests.
package mailer
