package gormstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"

	"github.com/gatehouse/gatehouse/domain"
)

// sessionLookupSQL reads a session and its user in one round trip, through
// the unique index on token_hash and the users primary key. Every
// authenticated request runs it.
const sessionLookupSQL = `SELECT
 s.id, s.user_id, s.token_hash, s.remember_me, s.ip_address, s.user_agent,
 s.active_organization_id, s.impersonated_by, s.expires_at, s.created_at, s.updated_at,
 s.auth_methods, s.second_factor_at,
 u.id, u.name, u.email, u.email_verified, u.image, u.role, u.banned, u.ban_reason, u.ban_expires,
 u.public_metadata, u.private_metadata, u.two_factor_enabled, u.created_at, u.updated_at
FROM sessions s JOIN users u ON u.id = s.user_id
WHERE s.token_hash = ?`

// sessionLookupPostgres is sessionLookupSQL with PostgreSQL's placeholder.
var sessionLookupPostgres = strings.Replace(sessionLookupSQL, "?", "$1", 1)

// sessionLookup runs the session lookup on the connection pool itself, not
// through gorm: the query is fixed and its row lands in typed variables, so
// gorm's statement building, callbacks and reflective scanning (half the
// cost of an authenticated request on PostgreSQL, with the query itself)
// buy nothing here. On PostgreSQL the row is read through pgx directly,
// which skips database/sql's per-column conversions as well; the statement
// is prepared once per connection by pgx's statement cache. The bound on
// each statement (the deadlines plugin) is applied here the same way.
//
// The lookup only reads, and runs on a connection of its own: a unit of
// work in the caller's context does not take part.
type sessionLookup struct {
	pool     *sql.DB
	postgres bool
	// timeout bounds the wait for a connection and the statement on
	// PostgreSQL, as the deadlines plugin bounds gorm's statements; zero
	// on SQLite (see Connect).
	timeout time.Duration
}

func newSessionLookup(db *gorm.DB) *sessionLookup {
	pool, err := db.DB()
	if err != nil {
		panic("gormstore: the session lookup needs a connection pool: " + err.Error())
	}
	l := &sessionLookup{pool: pool, postgres: DialectOf(db) == DialectPostgres}
	if p, ok := db.Config.Plugins[deadlinesName].(*deadlines); ok {
		l.timeout = p.timeout
	}
	return l
}

// get returns the session whose token hashes to h and its user, or
// domain.ErrSessionNotFound.
func (l *sessionLookup) get(ctx context.Context, h domain.TokenHash) (*domain.Session, *domain.User, error) {
	if l.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = bound(ctx, l.timeout)
		defer cancel()
	}
	var row sessionUserScan
	var err error
	if l.postgres {
		err = l.getPostgres(ctx, string(h), &row)
	} else {
		err = l.pool.QueryRowContext(ctx, sessionLookupSQL, string(h)).Scan(row.dest()...)
	}
	switch {
	case errors.Is(err, sql.ErrNoRows): // pgx.ErrNoRows is one too
		return nil, nil, domain.ErrSessionNotFound
	case err != nil:
		return nil, nil, convertErr("sessions.get_by_token_hash", err, nil, nil)
	}
	return row.session(), row.user(), nil
}

// getSessionInUnit is the lookup through tx, a unit of work's transaction.
func getSessionInUnit(tx *gorm.DB, h domain.TokenHash) (*domain.Session, *domain.User, error) {
	var row sessionUserScan
	err := tx.Raw(sessionLookupSQL, string(h)).Row().Scan(row.dest()...)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil, domain.ErrSessionNotFound
	case err != nil:
		return nil, nil, convertErr("sessions.get_by_token_hash", err, nil, nil)
	}
	return row.session(), row.user(), nil
}

// errNotPgx says the pool's driver is not pgx's own (say, wrapped).
var errNotPgx = errors.New("gormstore: not a pgx connection")

// badConnRetries is how many times a lookup that found its connection
// broken before anything was sent tries another, as database/sql does.
const badConnRetries = 2

// getPostgres reads the row through the pgx connection under a pooled
// database/sql connection. A connection that is closed, or whose statement
// failed before reaching the server, is discarded and the lookup tried on
// another, as pgx's database/sql driver would have database/sql do.
func (l *sessionLookup) getPostgres(ctx context.Context, hash string, row *sessionUserScan) error {
	var err error
	for range badConnRetries + 1 {
		var conn *sql.Conn
		if conn, err = l.pool.Conn(ctx); err != nil {
			return err
		}
		err = conn.Raw(func(dc any) error {
			c, ok := dc.(*stdlib.Conn)
			if !ok {
				return errNotPgx
			}
			pc := c.Conn()
			if pc.IsClosed() {
				return driver.ErrBadConn
			}
			err := pc.QueryRow(ctx, sessionLookupPostgres, hash).Scan(row.dest()...)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) && pgconn.SafeToRetry(err) {
				return driver.ErrBadConn // database/sql closes the connection
			}
			return err
		})
		_ = conn.Close()
		if errors.Is(err, errNotPgx) { // a wrapped driver: through database/sql then
			return l.pool.QueryRowContext(ctx, sessionLookupPostgres, hash).Scan(row.dest()...)
		}
		if !errors.Is(err, driver.ErrBadConn) {
			return err
		}
	}
	return err
}

// sessionUserScan is one row of the session lookup, in the column order of
// sessionLookupSQL.
type sessionUserScan struct {
	s              sessionRow
	u              userRow
	activeOrg      sql.NullString
	impersonatedBy sql.NullString
	secondFactorAt sql.NullTime
	banExpires     sql.NullTime
	// into holds dest's pointers, so that they cost no allocation of
	// their own: the row is on the heap anyway.
	into [27]any
}

// dest returns the scan destinations, in the column order of the query.
func (r *sessionUserScan) dest() []any {
	r.into = [27]any{
		&r.s.ID, &r.s.UserID, &r.s.TokenHash, &r.s.RememberMe, &r.s.IPAddress, &r.s.UserAgent,
		&r.activeOrg, &r.impersonatedBy, &r.s.ExpiresAt, &r.s.CreatedAt, &r.s.UpdatedAt,
		&r.s.AuthMethods, &r.secondFactorAt,
		&r.u.ID, &r.u.Name, &r.u.Email, &r.u.EmailVerified, &r.u.Image, &r.u.Role, &r.u.Banned, &r.u.BanReason, &r.banExpires,
		&r.u.PublicMetadata, &r.u.PrivateMetadata, &r.u.TwoFactorEnabled, &r.u.CreatedAt, &r.u.UpdatedAt,
	}
	return r.into[:]
}

func (r *sessionUserScan) session() *domain.Session {
	if r.activeOrg.Valid {
		r.s.ActiveOrganizationID = &r.activeOrg.String
	}
	if r.impersonatedBy.Valid {
		r.s.ImpersonatedBy = &r.impersonatedBy.String
	}
	if r.secondFactorAt.Valid {
		r.s.SecondFactorAt = &r.secondFactorAt.Time
	}
	return r.s.toDomain()
}

func (r *sessionUserScan) user() *domain.User {
	if r.banExpires.Valid {
		r.u.BanExpires = &r.banExpires.Time
	}
	return r.u.toDomain()
}
