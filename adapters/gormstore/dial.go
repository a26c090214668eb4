package gormstore

import (
	"database/sql"
	"net"
	"net/url"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// The TCP settings of PostgreSQL connections. Keepalive probes find a peer
// that vanished while a pooled connection sat idle after about 30 s (Go's
// default is over two minutes); tcpUserTimeout closes a connection whose
// sent data stays unacknowledged that long, where the kernel would otherwise
// retransmit for a quarter of an hour. Neither limits how long a healthy
// server may take to answer: statement deadlines do that.
const (
	keepAliveIdle     = 15 * time.Second
	keepAliveInterval = 5 * time.Second
	keepAliveCount    = 3
	tcpUserTimeout    = 30 * time.Second
)

// openPostgres opens a pgx pool on dsn whose connections give up with the
// network: connecting is bounded by timeout unless the DSN (or
// PGCONNECT_TIMEOUT) sets connect_timeout itself, and the sockets use
// keepalive and TCP_USER_TIMEOUT.
func openPostgres(dsn string, timeout time.Duration) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	if !hasConnectTimeout(dsn) {
		cfg.ConnectTimeout = timeout
	}
	d := &net.Dialer{
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: keepAliveIdle, Interval: keepAliveInterval, Count: keepAliveCount},
		Control:         setUserTimeout(tcpUserTimeout),
	}
	cfg.DialFunc = d.DialContext
	return stdlib.OpenDB(*cfg), nil
}

// hasConnectTimeout reports whether the operator chose a connect timeout.
func hasConnectTimeout(dsn string) bool {
	if os.Getenv("PGCONNECT_TIMEOUT") != "" {
		return true
	}
	u, err := url.Parse(dsn)
	return err == nil && u.Query().Has("connect_timeout")
}
