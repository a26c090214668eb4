package gormstore

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
)

// Timeout bounds each database statement and each transaction as a whole,
// including the wait for a pooled connection, dialling and BEGIN/COMMIT. A
// zero Timeout means DefaultTimeout.
type Timeout time.Duration

// DefaultTimeout is the bound when none is configured: long enough for any
// query Gatehouse makes on a healthy database, short enough that a client
// gets its 503 before it gives up.
const DefaultTimeout = 5 * time.Second

// duration returns t as a duration, DefaultTimeout for zero or less.
func (t Timeout) duration() time.Duration {
	if t <= 0 {
		return DefaultTimeout
	}
	return time.Duration(t)
}

// timeoutKey carries a bound that replaces the configured one.
type timeoutKey struct{}

// WithTimeout returns a context under which each statement and transaction
// may take up to d instead of the configured bound. Long-running work that
// is known to be legitimate (the purge job's deletions) uses it; requests
// never do. The caller's own deadline, if sooner, still wins.
func WithTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, timeoutKey{}, d)
}

// deadlines is the gorm plugin that gives every statement a deadline,
// whatever the caller's context: a request's context has none, and without
// one a database that stops answering (a network cut, a blackholing
// firewall) holds the request, its pooled connection and the client until
// TCP gives up minutes later.
type deadlines struct {
	timeout time.Duration
}

const deadlinesName = "gatehouse:deadlines"

// Name implements gorm.Plugin.
func (*deadlines) Name() string { return deadlinesName }

// Initialize implements gorm.Plugin. The deadline is set before every other
// callback, so gorm's implicit transaction (BEGIN, COMMIT), the wait for a
// connection and the statement all run under it; it is released after every
// other callback, when the rows have been read. Row and Rows hand open rows
// to the caller, so their deadline is not cancelled early: it ends when it
// expires or when the caller's context ends.
func (d *deadlines) Initialize(db *gorm.DB) error {
	cb := db.Callback()
	const set, rel = deadlinesName + ":set", deadlinesName + ":release"
	if err := errors.Join(
		cb.Create().Before("*").Register(set, d.set), cb.Create().After("*").Register(rel, release),
		cb.Query().Before("*").Register(set, d.set), cb.Query().After("*").Register(rel, release),
		cb.Update().Before("*").Register(set, d.set), cb.Update().After("*").Register(rel, release),
		cb.Delete().Before("*").Register(set, d.set), cb.Delete().After("*").Register(rel, release),
		cb.Raw().Before("*").Register(set, d.set), cb.Raw().After("*").Register(rel, release),
		cb.Row().Before("*").Register(set, d.set), cb.Row().After("*").Register(rel, restore),
	); err != nil {
		return err
	}
	// A transaction begun with db.Transaction runs BEGIN and COMMIT outside
	// the statement callbacks; gorm bounds it when the caller's context has
	// no deadline. The repositories go through transaction, which bounds it
	// always.
	db.DefaultTransactionTimeout = d.timeout
	return nil
}

// deadlineContext is the statement's context while its deadline runs: it
// remembers the caller's context and the cancel, so release finds both on
// the statement itself (gorm's InstanceSet would build a key string and a
// map entry for every statement on the hot path).
type deadlineContext struct {
	context.Context
	parent context.Context
	cancel context.CancelFunc
}

func (d *deadlines) set(db *gorm.DB) {
	parent := db.Statement.Context
	ctx, cancel := bound(parent, d.timeout)
	db.Statement.Context = &deadlineContext{Context: ctx, parent: parent, cancel: cancel}
}

// release ends the statement's deadline and puts back the caller's context,
// so a chained *gorm.DB that runs another statement starts a fresh one.
func release(db *gorm.DB) {
	if dc, ok := db.Statement.Context.(*deadlineContext); ok {
		dc.cancel()
		db.Statement.Context = dc.parent
	}
}

// restore puts back the caller's context but leaves the deadline running for
// the rows the caller is still reading.
func restore(db *gorm.DB) {
	if dc, ok := db.Statement.Context.(*deadlineContext); ok {
		db.Statement.Context = dc.parent
	}
}

// bound returns ctx with the bound that applies to it: def, or what
// WithTimeout asked for.
func bound(ctx context.Context, def time.Duration) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Value(timeoutKey{}).(time.Duration); ok && d > 0 {
		def = d
	}
	return context.WithTimeout(ctx, def)
}

// transaction runs fn in a transaction on db under ctx, bounded as a whole
// like a statement where statements are (PostgreSQL), so a BEGIN or COMMIT
// that never comes back cannot hold the caller (or the connection) past the
// deadline. Inside a unit of work (see UnitOfWork) it joins the unit's
// transaction as a savepoint: fn's writes are undone alone when it fails,
// and kept or undone with the unit otherwise; its row locks last until the
// unit ends.
func transaction(ctx context.Context, db *gorm.DB, fn func(tx *gorm.DB) error) error {
	if u := unitOf(ctx, db); u != nil {
		return u.tx.WithContext(ctx).Transaction(fn)
	}
	p, ok := db.Config.Plugins[deadlinesName].(*deadlines)
	if !ok { // SQLite: see Connect
		return db.WithContext(ctx).Transaction(fn)
	}
	ctx, cancel := bound(ctx, p.timeout)
	defer cancel()
	return db.WithContext(ctx).Transaction(fn)
}
