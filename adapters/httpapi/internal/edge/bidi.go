package edge

import (
	"bytes"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/domain"
)

// NeutralizeBidi replaces every bidirectional formatting character
// (domain.IsBidiControl) in a rendered HTML page with U+FFFD, the
// replacement character. The templates hold none, so
// each one came from stored data: a name written before the domain refused
// them, or one a store was given directly. Shown raw, a right-to-left
// override would reorder the rest of the name on an operator's screen
// ("\u202Egnp.exe" shows as "exe.png"); shown as U+FFFD, the name reads in
// its stored order and the tampering shows.
func NeutralizeBidi(page []byte) []byte {
	// Every control starts with the byte 0xD8 (U+061C) or 0xE2 in UTF-8:
	// most pages hold neither, and are answered as they are.
	if bytes.IndexByte(page, 0xE2) < 0 && bytes.IndexByte(page, 0xD8) < 0 {
		return page
	}
	var out []byte
	for i := 0; i < len(page); {
		r, n := utf8.DecodeRune(page[i:])
		if domain.IsBidiControl(r) {
			if out == nil {
				out = append(make([]byte, 0, len(page)+8), page[:i]...)
			}
			out = utf8.AppendRune(out, utf8.RuneError)
		} else if out != nil {
			out = append(out, page[i:i+n]...)
		}
		i += n
	}
	if out == nil {
		return page
	}
	return out
}
