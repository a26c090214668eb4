package blocklist

import (
	_ "embed"
	"strings"
	"sync"

	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.PasswordBlocklist = (*List)(nil)

// commonPasswords holds one lower-cased password of 8 to 128 characters per
// line.
//
//go:embed common-passwords.txt
var commonPasswords string

// List is the embedded list of common passwords. The zero value is not
// usable; call New.
type List struct {
	once    sync.Once
	entries map[string]struct{}
}

// New returns the embedded list. The file is parsed on first use, so building
// the application costs nothing until a password is checked.
func New() *List { return &List{} }

func (l *List) load() {
	l.once.Do(func() {
		l.entries = make(map[string]struct{}, strings.Count(commonPasswords, "\n")+1)
		for line := range strings.Lines(commonPasswords) {
			if p := strings.TrimRight(line, "\r\n"); p != "" {
				l.entries[p] = struct{}{}
			}
		}
	})
}

// Contains implements ports.PasswordBlocklist. It does not lower-case its
// argument itself: the port's contract is that callers pass the lower-cased
// password, so "Password1" is only found as "password1".
func (l *List) Contains(lowerPassword string) bool {
	l.load()
	_, ok := l.entries[lowerPassword]
	return ok
}

// Len returns the number of entries.
func (l *List) Len() int {
	l.load()
	return len(l.entries)
}
