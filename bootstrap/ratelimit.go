package bootstrap

import (
	"context"
	"log/slog"
	"time"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/ratelimit"
	"github.com/gatehouse/gatehouse/ports"
)

// rateLimits is the rate limiter the settings chose, and what else start-up
// and the jobs need of it.
type rateLimits struct {
	limiter ports.RateLimiter
	store   string                             // where the windows are counted, for the start-up lines (App.RateLimits)
	purge   func(context.Context) (int, error) // deletes ended windows; nil unless they are rows of the database
	// failures counts the hits counted in memory because of the shared
	// store, and down reports whether its breaker is open, for the
	// metrics; nil when the limits are counted in memory.
	failures func() uint64
	down     func() bool
}

// redisPingTimeout bounds the start-up check that Redis answers.
const redisPingTimeout = 2 * time.Second

// sqlRateLimits chooses where the rate limits are counted, so that they hold
// in total however many replicas serve: in Redis when GATEHOUSE_REDIS_URL is
// set; else on PostgreSQL in the database every replica shares (rather than
// refusing to start without Redis: the database is already there, and one
// upsert on a primary key per request is well within its means); else
// (SQLite, one process) in memory. App.RateLimits names the choice.
func sqlRateLimits(cfg Config, db *gorm.DB, logger *slog.Logger) (*rateLimits, func(), error) {
	if !cfg.HTTP.RateLimit || cfg.Database.RedisURL != "" || gormstore.DialectOf(db) != gormstore.DialectPostgres {
		return memoryRateLimits(cfg, logger)
	}
	pg, err := gormstore.NewRateLimiter(db)
	if err != nil {
		return nil, nil, err
	}
	s := ratelimit.NewShared(pg, "PostgreSQL", logger, sharedOptions(cfg))
	return &rateLimits{limiter: s, store: "counted in PostgreSQL, shared by the replicas on this database", purge: pg.DeleteExpired,
		failures: s.Failures, down: s.Down}, s.Close, nil
}

// memoryRateLimits counts the rate limits in Redis when GATEHOUSE_REDIS_URL
// is set, else in memory; with the limits off, nothing is counted.
func memoryRateLimits(cfg Config, logger *slog.Logger) (*rateLimits, func(), error) {
	var l *rateLimits
	var cleanup func()
	switch {
	case !cfg.HTTP.RateLimit:
		m := ratelimit.NewMemory()
		l, cleanup = &rateLimits{limiter: m, store: "off (" + settingRateLimit.env + ")"}, m.Close
	case cfg.Database.RedisURL != "":
		client, err := ratelimit.OpenRedis(cfg.Database.RedisURL)
		if err != nil {
			return nil, nil, err
		}
		name := "Redis " + ratelimit.DescribeRedis(cfg.Database.RedisURL)
		s := ratelimit.NewShared(ratelimit.NewRedis(client, cfg.Database.RedisPrefix), name, logger, sharedOptions(cfg))
		l = &rateLimits{limiter: s, store: "counted in " + name + ", shared by the replicas using it", failures: s.Failures, down: s.Down}
		cleanup = func() { s.Close(); _ = client.Close() }
		// A Redis away at start is no reason not to serve: Shared counts
		// in memory until it answers, as it would if Redis left later.
		ctx, cancel := context.WithTimeout(context.Background(), redisPingTimeout)
		defer cancel()
		if err := client.Ping(ctx).Err(); err != nil {
			logger.Warn("rate limits: Redis does not answer; counting in this process until it does",
				slog.String("store", name), slog.String("error", err.Error()))
		}
	default:
		m := ratelimit.NewMemory()
		l, cleanup = &rateLimits{limiter: m, store: "counted in this process's memory"}, m.Close
	}
	return l, cleanup, nil
}

// sharedOptions bounds each hit on the shared store by its own short
// deadline, well within the database timeout: a store that fails must not
// cost every request a full timeout before its own queries.
func sharedOptions(cfg Config) ratelimit.SharedOptions {
	return ratelimit.SharedOptions{Timeout: cfg.Database.RateLimitStoreTimeout}
}

func rateLimiter(l *rateLimits) ports.RateLimiter { return l.limiter }
