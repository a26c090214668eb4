package domain

import "strings"

// IsBidiControl reports whether r is a bidirectional formatting character:
// the embeddings and overrides U+202A–U+202E, the isolates U+2066–U+2069,
// the marks U+200E, U+200F and U+061C. None has a place in a name: each
// reorders what follows it, so that "\u202Egnp.exe" shows as "exe.png", and
// a name can pass, on an operator's screen, for another.
func IsBidiControl(r rune) bool {
	switch {
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return r == 0x200E || r == 0x200F || r == 0x061C
}

// HasBidiControl reports whether s holds a bidirectional formatting
// character (IsBidiControl).
func HasBidiControl(s string) bool { return strings.ContainsFunc(s, IsBidiControl) }

// bidiMessage is the field message of a name refused for holding one.
const bidiMessage = "must not contain direction controls (such as U+202E, the right-to-left override)"
