package system

import (
	"github.com/google/wire"

	"github.com/gatehouse/gatehouse/ports"
)

// Set provides the real clock, identifier generator and token generator.
var Set = wire.NewSet(ClockSet, GeneratorSet)

// ClockSet provides the real clock.
var ClockSet = wire.NewSet(NewClock, wire.Bind(new(ports.Clock), new(Clock)))

// GeneratorSet provides the identifier and token generators alone, for an
// injector that takes its clock from elsewhere.
var GeneratorSet = wire.NewSet(
	NewIDGenerator, wire.Bind(new(ports.IDGenerator), new(IDGenerator)),
	NewTokenGenerator, wire.Bind(new(ports.TokenGenerator), new(TokenGenerator)),
)
