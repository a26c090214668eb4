package system

import (
	"github.com/google/wire"

	"github.com/gatehouse/gatehouse/ports"
)

// Set provides the real clock, identifier generator and token generator.
var Set = wire.NewSet(
	NewClock, wire.Bind(new(ports.Clock), new(Clock)),
	NewIDGenerator, wire.Bind(new(ports.IDGenerator), new(IDGenerator)),
	NewTokenGenerator, wire.Bind(new(ports.TokenGenerator), new(TokenGenerator)),
)
