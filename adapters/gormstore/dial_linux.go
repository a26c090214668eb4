package gormstore

import (
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// setUserTimeout returns a dialer Control that sets TCP_USER_TIMEOUT on TCP
// sockets.
func setUserTimeout(d time.Duration) func(network, address string, c syscall.RawConn) error {
	return func(network, _ string, c syscall.RawConn) error {
		if !strings.HasPrefix(network, "tcp") {
			return nil // a Unix socket has no TCP options
		}
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(d/time.Millisecond))
		})
		if err != nil {
			return err
		}
		return serr
	}
}
