// Package smtptest runs a real SMTP server on loopback for end-to-end tests
// of the mailers: it keeps every mail it receives, parses the MIME parts and
// finds the links, and serves the mailbox as JSON for test suites in other
// languages. It is imported by tests only.
package smtptest
