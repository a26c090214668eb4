// Package metrics implements ports.Observer on Prometheus counters and
// histograms in a registry of its own (never the global one), adds the
// outbox's depth and age (read on each scrape), the database pool's
// statistics and the Go runtime and process collectors, and serves them in
// the Prometheus text format. Gatehouse serves that handler on its own
// listener (GATEHOUSE_METRICS_ADDR), never on the public one.
package metrics
