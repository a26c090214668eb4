package memory

import (
	"github.com/google/wire"

	"github.com/gatehouse/gatehouse/ports"
)

// Set provides every storage port from memory. An injector includes exactly
// one of memory.Set and gormstore.Set.
var Set = wire.NewSet(
	NewUserRepository, wire.Bind(new(ports.UserRepository), new(*UserRepository)),
	NewHealthChecker, wire.Bind(new(ports.HealthChecker), new(*HealthChecker)),
)
