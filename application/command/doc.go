// Package command holds the use cases that change state: signing up and in,
// sessions, passwords, e-mail verification and the rest of the
// authentication framework. Each use case is a command struct and a handler
// built on ports only.
package command
