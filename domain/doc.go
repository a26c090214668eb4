// Package domain holds Gatehouse's entities, value objects, typed identifiers
// and the one error type every layer returns. It imports the standard library
// only: no HTTP, ORM or wiring code may reach it.
//
// Each stored type is an entity or a record (docs/development.md, "The
// domain: entities and records"). An entity (User, Session, Organization,
// …) has private fields, a NewX that checks, methods that keep its rules
// and a RehydrateX only stores call. A record (IdentityProvider,
// WebhookEndpoint, PasskeyCredential, OAuthGrant, LinkedAccount, …) has
// public fields and is checked by a constructor that returns a new value
// (NewIdentityProvider, ReviseIdentityProvider, WebhookEndpoint.Changed);
// nothing validates a record by changing it in place.
package domain
