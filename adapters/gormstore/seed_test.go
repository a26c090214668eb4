package gormstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/adapters/gormstore"
	"github.com/gatehouse/gatehouse/domain"
)

// seedTx is the transaction in which a seed built in Go inserts its rows:
// on SQLite in multi-row INSERTs; on PostgreSQL by COPY, which takes the
// same rows in about half the time (a multi-row INSERT has a parameter per
// value for PostgreSQL to parse and bind).
type seedTx struct {
	tb   testing.TB
	tx   *sql.Tx   // SQLite
	conn *sql.Conn // PostgreSQL: the connection the transaction is open on
	done bool
}

// beginSeed begins a seed's transaction on db.
func beginSeed(tb testing.TB, db *gorm.DB) *seedTx {
	tb.Helper()
	sqlDB, err := db.DB()
	if err != nil {
		tb.Fatal(err)
	}
	if gormstore.DialectOf(db) != gormstore.DialectPostgres {
		tx, err := sqlDB.Begin()
		if err != nil {
			tb.Fatal(err)
		}
		return &seedTx{tb: tb, tx: tx}
	}
	conn, err := sqlDB.Conn(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN"); err != nil {
		_ = conn.Close()
		tb.Fatal(err)
	}
	return &seedTx{tb: tb, conn: conn}
}

// insert inserts rows into table, its times as the store writes them (UTC,
// microseconds, through the same driver).
func (s *seedTx) insert(table string, cols []string, rows [][]any) {
	s.tb.Helper()
	for _, row := range rows {
		for c, v := range row {
			if t, ok := v.(time.Time); ok {
				row[c] = domain.Timestamp(t)
			}
		}
	}
	if s.tx != nil {
		insertRows(s.tb, s.tx, table, cols, rows)
		return
	}
	err := s.conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("%T is not a pgx connection", dc)
		}
		_, err := c.Conn().CopyFrom(context.Background(), pgx.Identifier{table}, cols, pgx.CopyFromRows(rows))
		return err
	})
	if err != nil {
		s.tb.Fatalf("copy into %s: %v", table, err)
	}
}

// commit commits the seed.
func (s *seedTx) commit() {
	s.tb.Helper()
	s.done = true
	if s.tx != nil {
		if err := s.tx.Commit(); err != nil {
			s.tb.Fatal(err)
		}
		return
	}
	defer func() { _ = s.conn.Close() }()
	if _, err := s.conn.ExecContext(context.Background(), "COMMIT"); err != nil {
		s.tb.Fatal(err)
	}
}

// rollback ends a seed that did not commit.
func (s *seedTx) rollback() {
	if s.done {
		return
	}
	if s.tx != nil {
		_ = s.tx.Rollback()
		return
	}
	_, _ = s.conn.ExecContext(context.Background(), "ROLLBACK")
	_ = s.conn.Close()
}

// insertRows inserts rows into table in one multi-row INSERT (SQLite's
// placeholders).
func insertRows(tb testing.TB, tx *sql.Tx, table string, cols []string, rows [][]any) {
	tb.Helper()
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES ")
	args := make([]any, 0, len(rows)*len(cols))
	for r, row := range rows {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c, v := range row {
			if c > 0 {
				b.WriteString(", ")
			}
			args = append(args, v)
			b.WriteByte('?')
		}
		b.WriteByte(')')
	}
	if _, err := tx.Exec(b.String(), args...); err != nil {
		tb.Fatalf("insert into %s: %v", table, err)
	}
}
