package application

import "github.com/gatehouse/gatehouse/application/query"

// Application is every use case, grouped as commands and queries.
type Application struct {
	Commands Commands
	Queries  Queries
}

// Commands are the use cases that change state.
type Commands struct{}

// Queries are the use cases that only read.
type Queries struct {
	Readiness *query.ReadinessHandler
}
