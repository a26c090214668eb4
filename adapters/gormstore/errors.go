package gormstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/domain"
)

// convertErr is the one place a database error becomes a domain error: a
// missing row is NotFound, a unique violation Conflict, a dead connection
// Unavailable, and anything else Internal with the cause kept for logs. A
// foreign-key violation means the referenced row (the owning user) is
// missing, so it becomes notFound too: callers that insert rows owning a
// reference pass the owner's not-found error.
func convertErr(op string, err error, notFound, conflict *domain.Error) error {
	if err == nil {
		return nil
	}
	var de *domain.Error
	switch {
	case errors.As(err, &de):
		return err
	case errors.Is(err, gorm.ErrRecordNotFound) && notFound != nil:
		return notFound
	case errors.Is(err, gorm.ErrDuplicatedKey) && conflict != nil:
		return conflict
	case isForeignKeyViolation(err) && notFound != nil:
		return notFound
	case isUnavailable(err):
		return &domain.Error{Kind: domain.KindUnavailable, Code: "database.unavailable",
			Message: "the database is unavailable", Err: fmt.Errorf("gormstore: %s: %w", op, err)}
	}
	return domain.Internal("gormstore: "+op, err)
}

// pgForeignKeyViolation is PostgreSQL's SQLSTATE foreign_key_violation, and
// sqliteConstraintForeignKey SQLite's extended result code
// SQLITE_CONSTRAINT_FOREIGNKEY.
const (
	pgForeignKeyViolation      = "23503"
	sqliteConstraintForeignKey = 787
)

// isForeignKeyViolation reports whether err is a foreign-key violation on
// either dialect. The dialectors translate it to gorm.ErrForeignKeyViolated,
// but only for an error of the driver's own type at the top of the chain;
// the driver codes are checked too, so a wrapped error is still recognised.
// SQLite's message is the last resort, for a build without extended result
// codes, where the code is the bare SQLITE_CONSTRAINT.
func isForeignKeyViolation(err error) bool {
	if errors.Is(err, gorm.ErrForeignKeyViolated) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == pgForeignKeyViolation
	}
	var coded interface{ Code() int }
	if errors.As(err, &coded) && coded.Code() == sqliteConstraintForeignKey {
		return true
	}
	return strings.Contains(err.Error(), "FOREIGN KEY constraint failed")
}

func isUnavailable(err error) bool {
	var netErr net.Error
	var connErr *pgconn.ConnectError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, sql.ErrConnDone) || errors.As(err, &netErr) || errors.As(err, &connErr) ||
		pgconn.Timeout(err)
}
