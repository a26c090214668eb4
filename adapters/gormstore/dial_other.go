//go:build !linux

package gormstore

import (
	"syscall"
	"time"
)

// setUserTimeout returns nil: TCP_USER_TIMEOUT is Linux's; elsewhere
// keepalive and the statement deadlines do the work.
func setUserTimeout(time.Duration) func(network, address string, c syscall.RawConn) error {
	return nil
}
