// Package ratelimit implements ports.RateLimiter in process memory (Memory)
// and in Redis (Redis), and fronts the limiters over a store that replicas
// share with Shared, which keeps refused keys closed locally and counts in
// memory while the store fails.
package ratelimit
