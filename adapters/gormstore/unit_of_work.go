package gormstore

import (
	"context"

	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.UnitOfWork = (*UnitOfWork)(nil)

// UnitOfWork runs repository calls as one database transaction. The
// transaction travels in the context fn receives: every repository reaches
// the database through conn or transaction, which use the context's
// transaction when it belongs to their database. On PostgreSQL the
// transaction as a whole is bounded like one statement (see transaction),
// and each statement inside it still gets its own deadline; on SQLite it is
// an immediate transaction, holding the write lock from its start.
type UnitOfWork struct {
	db *gorm.DB
}

// NewUnitOfWork returns a UnitOfWork on db.
func NewUnitOfWork(db *gorm.DB) *UnitOfWork {
	if db == nil {
		panic("gormstore: nil db")
	}
	return &UnitOfWork{db: db}
}

// unitKey carries the context's open transaction.
type unitKey struct{}

// unit is an open transaction and the pool it was begun on: a repository
// on another database (tests open several) must not use it. afterCommit
// holds what to run once it has committed.
type unit struct {
	pool        gorm.ConnPool
	tx          *gorm.DB
	afterCommit []func()
}

// Do implements ports.UnitOfWork. A repository's own transaction inside the
// unit (an Update, say) becomes a savepoint, so that it stays atomic on its
// own: when it fails, what it wrote is undone and the unit can go on. A
// single statement that fails inside the unit has no savepoint: PostgreSQL
// then refuses every further statement of the transaction, so fn should
// return such an error rather than carry on.
func (u *UnitOfWork) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	if unitOf(ctx, u.db) != nil {
		return fn(ctx)
	}
	var (
		fnErr error
		open  = &unit{pool: u.db.ConnPool}
	)
	err := transaction(ctx, u.db, func(tx *gorm.DB) error {
		open.tx = tx
		fnErr = fn(context.WithValue(tx.Statement.Context, unitKey{}, open))
		return fnErr
	})
	// fn's own error goes back as it is; any other is BEGIN's or COMMIT's.
	if err != nil && err != fnErr {
		return convertErr("unit_of_work", err, nil, nil)
	}
	if err == nil {
		for _, h := range open.afterCommit {
			h()
		}
	}
	return err
}

// unitOf returns ctx's unit of work on db, or nil.
func unitOf(ctx context.Context, db *gorm.DB) *unit {
	if u, ok := ctx.Value(unitKey{}).(*unit); ok && u.pool == db.ConnPool {
		return u
	}
	return nil
}

// conn returns the handle a repository on db runs a statement with under
// ctx: the transaction of ctx's unit of work, or db itself.
func conn(ctx context.Context, db *gorm.DB) *gorm.DB {
	if u := unitOf(ctx, db); u != nil {
		return u.tx.WithContext(ctx)
	}
	return db.WithContext(ctx)
}
