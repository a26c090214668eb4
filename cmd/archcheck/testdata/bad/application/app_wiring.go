package application

import (
	"example.com/app/application/account"
	"example.com/app/application/admin"
)

// Contexts gathers the contexts for wiring: the root package is exempt
// from rule 7.
var Contexts = []any{account.ResetLink, admin.SendReset}
