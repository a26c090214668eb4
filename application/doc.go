// Package application holds Gatehouse's use cases, one package per bounded
// context, each in the one style its doc.go states: account/ (a handler per
// use case), organization/, admin/, oidc/, servicekey/, hostdomain/,
// federation/ and webhook/ (a service per context or role), outbox/ (a
// worker), query/ (the read-only handlers that stand alone), and usecase/,
// what they share. Each use case is built on ports and decides
// every policy question; the HTTP edge only translates. Application (app.go)
// gathers them for wiring.
package application
