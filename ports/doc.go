// Package ports declares the interfaces the application needs from the outside
// world (storage, time, identifiers, health). It holds interfaces only; the
// adapters implement them and ports/conformance proves every implementation
// behaves the same.
package ports
