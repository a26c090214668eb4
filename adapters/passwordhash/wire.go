package passwordhash

import (
	"github.com/google/wire"

	"github.com/gatehouse/gatehouse/ports"
)

// Set provides the password hasher with the default parameters.
var Set = wire.NewSet(NewDefault, wire.Bind(new(ports.PasswordHasher), new(*Hasher)))
