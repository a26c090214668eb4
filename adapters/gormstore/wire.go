package gormstore

import (
	"github.com/google/wire"

	"github.com/gatehouse/gatehouse/ports"
)

// Set provides every storage port on SQL. It needs a *gorm.DB (see Open).
var Set = wire.NewSet(
	NewUserRepository, wire.Bind(new(ports.UserRepository), new(*UserRepository)),
	NewHealthChecker, wire.Bind(new(ports.HealthChecker), new(*HealthChecker)),
)
