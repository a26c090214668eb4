package gormstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/domain"
)

// codedError mimics modernc.org/sqlite's *Error, which exposes its extended
// result code through Code().
type codedError int

func (e codedError) Error() string { return fmt.Sprintf("sqlite error %d", int(e)) }
func (e codedError) Code() int     { return int(e) }

func TestIsForeignKeyViolation(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"gorm_translated", fmt.Errorf("insert: %w", gorm.ErrForeignKeyViolated), true},
		{"pgx_23503_wrapped", fmt.Errorf("insert: %w", &pgconn.PgError{Code: "23503"}), true},
		{"pgx_unique_violation", &pgconn.PgError{Code: "23505"}, false},
		{"sqlite_extended_code_787_wrapped", fmt.Errorf("insert: %w", codedError(787)), true},
		{"sqlite_unique_code_2067", codedError(2067), false},
		{"sqlite_message_only", errors.New("constraint failed: FOREIGN KEY constraint failed (19)"), true},
		{"duplicate_key", gorm.ErrDuplicatedKey, false},
		{"other", errors.New("disk I/O error"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isForeignKeyViolation(tt.err); got != tt.want {
				t.Fatalf("isForeignKeyViolation(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestConvertErr_foreign_key_violation_is_the_owners_not_found(t *testing.T) {
	fk := fmt.Errorf("%w: %w", gorm.ErrForeignKeyViolated, &pgconn.PgError{Code: "23503"})
	if err := convertErr("op", fk, domain.ErrUserNotFound, domain.ErrSessionExists); err != domain.ErrUserNotFound {
		t.Fatalf("convertErr = %v, want %v", err, domain.ErrUserNotFound)
	}
	// Without a not-found error to give, it is our fault.
	if err := convertErr("op", fk, nil, domain.ErrSessionExists); domain.KindOf(err) != domain.KindInternal {
		t.Fatalf("convertErr without notFound = %v (kind %v), want internal", err, domain.KindOf(err))
	}
}

// Ensure every way the database can fail to answer becomes a safe
// database.unavailable error (503 at the edge) with its cause kept for the
// log, and that a statement's own failure stays internal.
func TestConvertErr_unavailable(t *testing.T) {
	cut := fmt.Errorf("failed to receive message: %w", io.ErrUnexpectedEOF)
	tests := []struct {
		name string
		err  error
		want domain.Kind
	}{
		{"deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), domain.KindUnavailable},
		{"client_cancelled", fmt.Errorf("query: %w", context.Canceled), domain.KindUnavailable},
		{"unexpected_eof_mid_query", cut, domain.KindUnavailable},
		{"eof", io.EOF, domain.KindUnavailable},
		{"connection_refused", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, domain.KindUnavailable},
		{"connection_reset_bare", fmt.Errorf("read: %w", syscall.ECONNRESET), domain.KindUnavailable},
		{"broken_pipe", fmt.Errorf("write: %w", syscall.EPIPE), domain.KindUnavailable},
		{"bad_conn", driver.ErrBadConn, domain.KindUnavailable},
		{"conn_done", sql.ErrConnDone, domain.KindUnavailable},
		{"tx_done", fmt.Errorf("organizations.lock: %w", sql.ErrTxDone), domain.KindUnavailable},
		{"pg_admin_shutdown", &pgconn.PgError{Code: "57P01"}, domain.KindUnavailable},
		{"pg_cannot_connect_now", &pgconn.PgError{Code: "57P03"}, domain.KindUnavailable},
		{"pg_too_many_connections", &pgconn.PgError{Code: "53300"}, domain.KindUnavailable},
		{"pg_query_canceled", &pgconn.PgError{Code: "57014"}, domain.KindUnavailable},
		{"pg_connection_failure", &pgconn.PgError{Code: "08006"}, domain.KindUnavailable},
		{"sqlite_busy", codedError(5), domain.KindUnavailable},
		{"sqlite_busy_snapshot", codedError(517), domain.KindUnavailable},
		{"pg_syntax_error", &pgconn.PgError{Code: "42601"}, domain.KindInternal},
		{"pg_unique_without_conflict_error", &pgconn.PgError{Code: "23505"}, domain.KindInternal},
		{"sqlite_constraint", codedError(19), domain.KindInternal},
		{"other", errors.New("disk I/O error"), domain.KindInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := convertErr("sessions.get", tt.err, nil, nil)
			if got := domain.KindOf(err); got != tt.want {
				t.Fatalf("convertErr(%v) kind = %v, want %v", tt.err, got, tt.want)
			}
			if !errors.Is(err, tt.err) {
				t.Fatalf("convertErr(%v) = %v: the cause is lost", tt.err, err)
			}
			var de *domain.Error
			if errors.As(err, &de) && tt.want == domain.KindUnavailable {
				if got, want := de.Code+": "+de.Message, "database.unavailable: the database is unavailable"; got != want {
					t.Fatalf("code and message = %q, want %q", got, want)
				}
			}
		})
	}
}

// Ensure a statement in a transaction whose context ended (its deadline
// passed under load) answers that the database is unavailable, not an
// internal error: database/sql rolls the transaction back when its context
// ends, and the next statement finds it done (sql.ErrTxDone). Seen as a 500
// on PostgreSQL with both cores saturated.
func TestConvertErr_transaction_ended_by_its_context(t *testing.T) {
	db, err := Connect(DatabaseURL("sqlite:"+t.TempDir()+"/tx.db"), Timeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sqlDB.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	tx, err := sqlDB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	// The rollback runs on database/sql's own goroutine: wait for it.
	var execErr error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, execErr = tx.Exec("SELECT 1"); errors.Is(execErr, sql.ErrTxDone) {
			break
		}
	}
	if !errors.Is(execErr, sql.ErrTxDone) {
		t.Fatalf("statement after the context ended: %v, want sql.ErrTxDone", execErr)
	}
	if got := convertErr("organizations.lock", execErr, nil, nil); domain.KindOf(got) != domain.KindUnavailable {
		t.Fatalf("convertErr = %v (kind %v), want unavailable", got, domain.KindOf(got))
	}
}
