// Package mailer implements ports.Mailer: SMTP sends real mail through
// go-mail, Log writes the mail to the log for local development, and Queue
// delivers through either in the background so that how long a request takes
// never reveals whether a mail was sent. Render turns a domain.Mail into a
// subject and plain-text and HTML bodies from the embedded templates.
//
// The smtptest package is a real SMTP server on loopback for tests.
package mailer
