package usecase_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// countingSessions counts the session checks that reach the store, and runs
// during, when set, in the middle of one (as a write on another goroutine
// would).
type countingSessions struct {
	ports.SessionRepository
	lookups atomic.Int32
	during  func()
}

func (r *countingSessions) GetByTokenHash(ctx context.Context, h domain.TokenHash) (*domain.Session, *domain.User, error) {
	r.lookups.Add(1)
	s, u, err := r.SessionRepository.GetByTokenHash(ctx, h)
	if r.during != nil {
		r.during()
	}
	return s, u, err
}

// cacheWorld is a store with one user and one session, seen through a
// session cache on a clock of the test's.
type cacheWorld struct {
	cache    *usecase.SessionCache
	counted  *countingSessions
	sessions ports.SessionRepository // through the cache
	users    ports.UserRepository    // through the cache
	units    ports.UnitOfWork        // through the cache
	bare     *memory.UserRepository
	user     *domain.User
	session  *domain.Session
	hash     domain.TokenHash
	now      time.Time
}

func newCacheWorld(t *testing.T, ttl time.Duration) *cacheWorld {
	t.Helper()
	db := memory.NewDB()
	w := &cacheWorld{now: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC), hash: domain.HashToken("token-1")}
	w.cache = usecase.NewSessionCacheAt(ttl, func() time.Time { return w.now })
	w.bare = memory.NewUserRepository(db)
	w.counted = &countingSessions{SessionRepository: memory.NewSessionRepository(db)}
	w.sessions, w.users, w.units = w.cache.Sessions(w.counted), w.cache.Users(w.bare), w.cache.UnitOfWork(memory.NewUnitOfWork(db))
	u, err := domain.NewUser("u1", "Ada", "ada@example.com", w.now)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.bare.Create(t.Context(), u); err != nil {
		t.Fatal(err)
	}
	w.user = u
	w.session = domain.NewSession("s1", u.ID(), w.hash, true, "", "", domain.SessionPolicy{Lifetime: time.Hour}, w.now)
	if err := w.sessions.Create(t.Context(), w.session); err != nil {
		t.Fatal(err)
	}
	return w
}

// lookup checks the session through the cache and returns the user's name
// and whether the store was asked.
func (w *cacheWorld) lookup(t *testing.T) (name string, asked bool, err error) {
	t.Helper()
	before := w.counted.lookups.Load()
	_, u, err := w.cache.Lookup(t.Context(), w.counted, w.hash)
	asked = w.counted.lookups.Load() != before
	if err != nil {
		return "", asked, err
	}
	return u.Name(), asked, nil
}

func (w *cacheWorld) mustLookup(t *testing.T, wantName string, wantAsked bool) {
	t.Helper()
	name, asked, err := w.lookup(t)
	if err != nil {
		t.Fatalf("lookup: %v", err)
	}
	if name != wantName || asked != wantAsked {
		t.Fatalf("lookup = name %q, asked the store %v; want %q, %v", name, asked, wantName, wantAsked)
	}
}

func (w *cacheWorld) rename(t *testing.T, users ports.UserRepository, ctx context.Context, name string) {
	t.Helper()
	if err := users.Update(ctx, w.user.ID(), func(u *domain.User) error { return u.Rename(name, w.now) }); err != nil {
		t.Fatal(err)
	}
}

// TestSessionCache: one case per rule of usecase.SessionCache.
func TestSessionCache(t *testing.T) {
	t.Parallel()
	t.Run("a_second_check_within_the_ttl_asks_nothing", func(t *testing.T) {
		t.Parallel()
		w := newCacheWorld(t, 500*time.Millisecond)
		w.mustLookup(t, "Ada", true)
		w.now = w.now.Add(499 * time.Millisecond)
		w.mustLookup(t, "Ada", false)
	})
	t.Run("a_check_older_than_the_ttl_asks_again", func(t *testing.T) {
		t.Parallel()
		w := newCacheWorld(t, 500*time.Millisecond)
		w.mustLookup(t, "Ada", true)
		w.now = w.now.Add(500 * time.Millisecond)
		w.mustLookup(t, "Ada", true)
	})
	t.Run("what_a_hit_returns_is_the_callers_own", func(t *testing.T) {
		t.Parallel()
		w := newCacheWorld(t, time.Second)
		w.mustLookup(t, "Ada", true)
		_, u, err := w.cache.Lookup(t.Context(), w.counted, w.hash)
		if err != nil {
			t.Fatal(err)
		}
		if err := u.Rename("Changed by the caller", w.now); err != nil {
			t.Fatal(err)
		}
		if err := u.SetRoles([]domain.PlatformRole{"admin"}, w.now); err != nil {
			t.Fatal(err)
		}
		_, again, err := w.cache.Lookup(t.Context(), w.counted, w.hash)
		if err != nil {
			t.Fatal(err)
		}
		if again.Name() != "Ada" || slices.Contains(again.Access().Roles, "admin") {
			t.Fatalf("the cache kept the caller's change: %q %v", again.Name(), again.Access().Roles)
		}
	})
	t.Run("a_user_write_through_the_cache_is_seen_at_once", func(t *testing.T) {
		t.Parallel()
		w := newCacheWorld(t, time.Second)
		w.mustLookup(t, "Ada", true)
		w.rename(t, w.users, t.Context(), "Grace")
		w.mustLookup(t, "Grace", true)
		w.mustLookup(t, "Grace", false)
	})
	t.Run("a_ban_through_the_cache_is_seen_at_once", func(t *testing.T) {
		t.Parallel()
		w := newCacheWorld(t, time.Second)
		w.mustLookup(t, "Ada", true)
		if err := w.users.Update(t.Context(), w.user.ID(), func(u *domain.User) error {
			return u.Ban("spam", time.Time{}, w.now)
		}); err != nil {
			t.Fatal(err)
		}
		_, u, err := w.cache.Lookup(t.Context(), w.counted, w.hash)
		if err != nil || !u.IsBanned(w.now) {
			t.Fatalf("after the ban the check found a user banned %v (%v)", u != nil && u.IsBanned(w.now), err)
		}
	})
	t.Run("a_session_deleted_through_the_cache_is_gone_at_once", func(t *testing.T) {
		t.Parallel()
		w := newCacheWorld(t, time.Second)
		w.mustLookup(t, "Ada", true)
		if err := w.sessions.Delete(t.Context(), w.user.ID(), w.session.ID()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.lookup(t); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("after sign-out the check = %v, want not found", err)
		}
	})
	t.Run("every_session_write_makes_checks_stale", func(t *testing.T) {
		t.Parallel()
		writes := map[string]func(w *cacheWorld, ctx context.Context) error{
			"update": func(w *cacheWorld, ctx context.Context) error {
				return w.sessions.Update(ctx, w.session.ID(), func(*domain.Session) error { return nil })
			},
			"delete_by_user": func(w *cacheWorld, ctx context.Context) error {
				_, err := w.sessions.DeleteByUser(ctx, w.user.ID(), w.session.ID())
				return err
			},
			"delete_expired": func(w *cacheWorld, ctx context.Context) error {
				_, err := w.sessions.DeleteExpired(ctx, w.now)
				return err
			},
			"clear_organization": func(w *cacheWorld, ctx context.Context) error {
				return w.sessions.ClearOrganization(ctx, "org-1", "")
			},
			"user_delete_of_another": func(w *cacheWorld, ctx context.Context) error {
				return usecase.IgnoreGone(w.users.Delete(ctx, "someone-else"))
			},
		}
		for name, write := range writes {
			t.Run(name, func(t *testing.T) {
				w := newCacheWorld(t, time.Second)
				w.mustLookup(t, "Ada", true)
				if err := write(w, t.Context()); err != nil {
					t.Fatal(err)
				}
				w.mustLookup(t, "Ada", true)
			})
		}
	})
	t.Run("a_unit_of_work_makes_checks_stale_once_it_is_over", func(t *testing.T) {
		t.Parallel()
		w := newCacheWorld(t, time.Second)
		w.mustLookup(t, "Ada", true)
		// The write inside goes through the bare repository: only the
		// unit's end tells the cache, as for any repository's write in a
		// unit, seen by other transactions only once it commits.
		err := w.units.Do(t.Context(), func(ctx context.Context) error {
			w.rename(t, w.bare, ctx, "Grace")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		w.mustLookup(t, "Grace", true)
	})
	t.Run("a_write_during_the_query_leaves_its_answer_unused", func(t *testing.T) {
		t.Parallel()
		w := newCacheWorld(t, time.Second)
		// The query reads "Ada"; a write commits before the answer is
		// kept. What was read must not count, since it may predate it.
		w.counted.during = func() { w.rename(t, w.users, t.Context(), "Grace") }
		w.mustLookup(t, "Ada", true)
		w.counted.during = nil
		w.mustLookup(t, "Grace", true)
	})
	t.Run("an_unknown_token_is_not_kept", func(t *testing.T) {
		t.Parallel()
		w := newCacheWorld(t, time.Second)
		w.hash = domain.HashToken("later")
		if _, _, err := w.lookup(t); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("unknown token: %v", err)
		}
		s := domain.NewSession("s2", w.user.ID(), w.hash, true, "", "", domain.SessionPolicy{Lifetime: time.Hour}, w.now)
		if err := w.sessions.Create(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		w.mustLookup(t, "Ada", true)
	})
	t.Run("a_ttl_of_zero_keeps_nothing", func(t *testing.T) {
		t.Parallel()
		w := newCacheWorld(t, 0)
		if w.cache != nil {
			t.Fatal("a zero ttl made a cache")
		}
		w.mustLookup(t, "Ada", true)
		w.mustLookup(t, "Ada", true)
	})
	t.Run("a_ttl_over_the_bound_is_cut_to_it", func(t *testing.T) {
		t.Parallel()
		w := newCacheWorld(t, time.Hour)
		w.mustLookup(t, "Ada", true)
		w.now = w.now.Add(usecase.MaxSessionCacheTTL - time.Millisecond)
		w.mustLookup(t, "Ada", false)
		w.now = w.now.Add(time.Millisecond)
		w.mustLookup(t, "Ada", true)
	})
}
