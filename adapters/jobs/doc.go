// Package jobs implements ports.Jobs with an in-process queue and one
// worker, started with the application and drained when it stops.
package jobs
