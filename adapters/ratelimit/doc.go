// Package ratelimit implements ports.RateLimiter in process memory (Memory)
// and in Redis (Redis), and fronts the limiters over a store that replicas
// share with Shared, which keeps refused keys closed locally, bounds each
// hit on the store by a short deadline of its own, and counts in memory
// while the store fails, leaving it alone for a while after each failure
// (a circuit breaker).
package ratelimit
