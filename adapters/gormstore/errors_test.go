package gormstore

import (
	"errors"
	"fmt"
	"testing"

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
	if err := convertErr("op", fk, errUserNotFound, errSessionConflict); err != errUserNotFound {
		t.Fatalf("convertErr = %v, want %v", err, errUserNotFound)
	}
	// Without a not-found error to give, it is our fault.
	if err := convertErr("op", fk, nil, errSessionConflict); domain.KindOf(err) != domain.KindInternal {
		t.Fatalf("convertErr without notFound = %v (kind %v), want internal", err, domain.KindOf(err))
	}
}
