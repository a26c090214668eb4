package blocklist

import (
	"github.com/google/wire"

	"github.com/gatehouse/gatehouse/ports"
)

// Set provides the embedded common-password list.
var Set = wire.NewSet(New, wire.Bind(new(ports.PasswordBlocklist), new(*List)))
