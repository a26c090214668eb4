package domain

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Position is a place in a listing ordered by time then id: the last item
// of a page, from which the next page continues. Clients see it only as an
// opaque cursor.
type Position struct {
	At time.Time
	ID string
}

// Cursor encodes p: its time in microseconds (the precision every store
// keeps) and its id, base64url-encoded.
func (p Position) Cursor() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(p.At.UnixMicro(), 10) + "~" + p.ID))
}

// ParseCursor decodes a cursor made by Position.Cursor. It refuses anything
// Cursor cannot have made: a time outside years 1 to 9999, or an id that is
// empty, not UTF-8 or holds a NUL, which a database could not compare.
func ParseCursor(s string) (Position, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Position{}, false
	}
	ts, id, ok := strings.Cut(string(raw), "~")
	if !ok || id == "" || !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
		return Position{}, false
	}
	micros, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return Position{}, false
	}
	at := time.UnixMicro(micros).UTC()
	if at.Year() < 1 || at.Year() > 9999 {
		return Position{}, false
	}
	return Position{At: at, ID: id}, true
}
