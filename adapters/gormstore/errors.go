package gormstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/domain"
)

// convertErr is the one place a database error becomes a domain error: a
// missing row is NotFound, a unique violation Conflict, a dead connection
// Unavailable, and anything else Internal with the cause kept for logs.
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
	case isUnavailable(err):
		return &domain.Error{Kind: domain.KindUnavailable, Code: "database.unavailable",
			Message: "the database is unavailable", Err: fmt.Errorf("gormstore: %s: %w", op, err)}
	}
	return domain.Internal("gormstore: "+op, err)
}

func isUnavailable(err error) bool {
	var netErr net.Error
	var connErr *pgconn.ConnectError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, sql.ErrConnDone) || errors.As(err, &netErr) || errors.As(err, &connErr) ||
		pgconn.Timeout(err)
}
