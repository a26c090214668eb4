// Package ratelimit implements ports.RateLimiter in process memory, and
// derives rate-limit keys from client addresses (ClientKey).
package ratelimit
