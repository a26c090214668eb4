package gormstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

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

// isUnavailable reports whether err says the database could not be reached
// or did not answer in time, rather than that the statement was wrong: a
// deadline or cancellation (and so a transaction that database/sql rolled
// back when its context ended, sql.ErrTxDone), a refused, reset or cut
// connection (including an "unexpected EOF" mid-answer), a failed connect, a connection the pool gave
// up on, a server that is shutting down, starting, out of connections or
// that cancelled the statement, or a SQLite write lock that stayed taken. A
// cancelled context is among them: whether the client left is the edge's to
// tell, and it is no fault of the statement either way.
func isUnavailable(err error) bool {
	var netErr net.Error
	var connErr *pgconn.ConnectError
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone), errors.Is(err, sql.ErrTxDone),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.As(err, &netErr), errors.As(err, &connErr), pgconn.Timeout(err):
		return true
	case errors.As(err, &pgErr):
		return isUnavailableState(pgErr.Code)
	}
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == sqliteBusy
}

// sqliteBusy is SQLite's primary result code SQLITE_BUSY: the write lock
// stayed taken for the whole busy_timeout.
const sqliteBusy = 5

// isUnavailableState reports whether a PostgreSQL SQLSTATE means the server
// cannot serve now: connection exceptions (class 08), too many connections,
// a cancelled statement, and a server shutting down or starting up.
func isUnavailableState(code string) bool {
	switch code {
	case "53300", "57014", "57P01", "57P02", "57P03":
		return true
	}
	return strings.HasPrefix(code, "08")
}
