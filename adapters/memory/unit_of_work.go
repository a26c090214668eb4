package memory

import (
	"context"

	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.UnitOfWork = (*UnitOfWork)(nil)

// UnitOfWork runs repository calls on one DB as one transaction: Do holds
// the DB's write lock while fn runs, so no other call sees a half-done unit,
// and records how to put back every change it makes (an undo log), which it
// replays, newest first, when fn fails or panics.
//
// The undo log was chosen over a snapshot of the maps: a snapshot costs a
// copy of every map a unit touches (the sessions map on every sign-in, say),
// growing with the store, while the log costs one small closure per change
// the unit makes and nothing at all outside a unit. What it relies on is
// that the repositories change the maps only through set and unset, and
// never change a stored value in place (they store copies and replace
// them); TestUnitOfWork_writes_go_through_the_undo_log checks the first.
type UnitOfWork struct {
	db *DB
}

// NewUnitOfWork returns a UnitOfWork on db.
func NewUnitOfWork(db *DB) *UnitOfWork {
	if db == nil {
		panic("memory: nil db")
	}
	return &UnitOfWork{db: db}
}

// unitKey carries the DB whose write lock the context's unit of work holds.
type unitKey struct{}

// Do implements ports.UnitOfWork. Inside fn every repository call made with
// fn's context runs under the lock Do holds; a call made with another
// context (context.Background(), say) would wait for that lock for ever, so
// fn must pass its context on. A Do inside another joins it: the outer one
// decides.
func (u *UnitOfWork) Do(ctx context.Context, fn func(ctx context.Context) error) (err error) {
	db := u.db
	if db.inUnit(ctx) {
		return fn(ctx)
	}
	db.mu.Lock()
	// A store already recording (only in this package's tests) keeps the
	// entries of a unit that commits, so that it can still undo them.
	mark, recording := len(db.undo), db.unit
	db.unit = true
	failed := true // until fn returns nil; a panic leaves it set
	defer func() {
		if failed {
			db.rollback(mark)
		}
		if db.unit = recording; !recording {
			db.undo = nil
		}
		hooks := db.afterCommit
		db.afterCommit = nil
		db.mu.Unlock()
		if !failed {
			for _, h := range hooks {
				h()
			}
		}
	}()
	if err := fn(context.WithValue(ctx, unitKey{}, db)); err != nil {
		return err
	}
	failed = false
	return nil
}

// rollback replays the undo log down to entry mark, newest change first,
// and forgets what it replayed. The caller holds the write lock.
func (db *DB) rollback(mark int) {
	for i := len(db.undo) - 1; i >= mark; i-- {
		db.undo[i]()
	}
	db.undo = db.undo[:mark]
}

// inUnit reports whether ctx belongs to a unit of work on db, which holds
// db's write lock.
func (db *DB) inUnit(ctx context.Context) bool {
	d, _ := ctx.Value(unitKey{}).(*DB)
	return d == db
}

// lock takes the write lock unless ctx's unit of work already holds it, and
// reports whether it took it: `defer db.unlock(db.lock(ctx))`.
func (db *DB) lock(ctx context.Context) bool {
	if db.inUnit(ctx) {
		return false
	}
	db.mu.Lock()
	return true
}

// unlock releases the write lock if lock took it.
func (db *DB) unlock(locked bool) {
	if locked {
		db.mu.Unlock()
	}
}

// rlock takes the read lock unless ctx's unit of work holds the write lock,
// and reports whether it took it: `defer db.runlock(db.rlock(ctx))`.
func (db *DB) rlock(ctx context.Context) bool {
	if db.inUnit(ctx) {
		return false
	}
	db.mu.RLock()
	return true
}

// runlock releases the read lock if rlock took it.
func (db *DB) runlock(locked bool) {
	if locked {
		db.mu.RUnlock()
	}
}

// set stores v at k in m, one of db's maps (or a map inside one), recording
// in a unit of work how to put back what was there. Every write to the
// store goes through set or unset. The caller holds the write lock.
func set[K comparable, V any](db *DB, m map[K]V, k K, v V) {
	if db.unit {
		old, had := m[k]
		db.undo = append(db.undo, func() {
			if had {
				m[k] = old
			} else {
				delete(m, k)
			}
		})
	}
	m[k] = v
}

// unset deletes k from m as set stores, recording in a unit of work how to
// put it back. The caller holds the write lock.
func unset[K comparable, V any](db *DB, m map[K]V, k K) {
	old, had := m[k]
	if !had {
		return
	}
	if db.unit {
		db.undo = append(db.undo, func() { m[k] = old })
	}
	delete(m, k)
}
