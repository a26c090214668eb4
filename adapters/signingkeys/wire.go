package signingkeys

import (
	"github.com/google/wire"

	"github.com/gatehouse/gatehouse/ports"
)

// Set provides ports.JOSE. It needs the service's Secrets.
var Set = wire.NewSet(New, wire.Bind(new(ports.JOSE), new(*JOSE)))

// SecretSealerSet provides ports.SecretSealer. It needs the service's Secrets.
var SecretSealerSet = wire.NewSet(NewSecretSealer, wire.Bind(new(ports.SecretSealer), new(*SecretSealer)))
