package bootstrap

import (
	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/ports"
)

// sessionCache returns the session check's cache (nil when
// GATEHOUSE_SESSION_CACHE_TTL is 0).
func sessionCache(c Config) *usecase.SessionCache {
	return usecase.NewSessionCache(c.Auth.SessionCacheTTL)
}

// The store's users, sessions and unit of work reach every use case through
// the session cache, so that each write through them makes its kept checks
// stale (see usecase.SessionCache).

func sqlSessions(r *gormstore.SessionRepository, c *usecase.SessionCache) ports.SessionRepository {
	return c.Sessions(r)
}

func sqlUsers(r *gormstore.UserRepository, c *usecase.SessionCache) ports.UserRepository {
	return c.Users(r)
}

func sqlUnitOfWork(u *gormstore.UnitOfWork, c *usecase.SessionCache) ports.UnitOfWork {
	return c.UnitOfWork(u)
}

func memorySessions(r *memory.SessionRepository, c *usecase.SessionCache) ports.SessionRepository {
	return c.Sessions(r)
}

func memoryUsers(r *memory.UserRepository, c *usecase.SessionCache) ports.UserRepository {
	return c.Users(r)
}

func memoryUnitOfWork(u *memory.UnitOfWork, c *usecase.SessionCache) ports.UnitOfWork {
	return c.UnitOfWork(u)
}
