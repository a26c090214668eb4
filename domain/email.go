package domain

import (
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Email is a normalised e-mail address: trimmed, lower-cased and in Unicode
// normalisation form C, so that one mailbox has one spelling in storage and
// lookups are exact.
type Email string

// maxEmailLength is the longest address SMTP can deliver to (RFC 5321 §4.5.3.1).
const maxEmailLength = 254

// The codes of addresses refused because they could pass for another one.
// The framework's edge answers each as Better Auth's INVALID_EMAIL.
const (
	// CodeEmailInvisible: the address holds a character that displays as
	// nothing (U+200B zero width space, soft hyphen, bidi controls, …).
	CodeEmailInvisible = "email.invisible_characters"
	// CodeEmailNotNormalized: NFKC changes the address (fullwidth forms,
	// ligatures, superscripts, …): it is a look-alike of a plainer one.
	CodeEmailNotNormalized = "email.not_normalized"
	// CodeEmailMixedScript: a label of the domain mixes scripts beyond
	// what UTS #39's highly restrictive level allows (Cyrillic "а" inside
	// "pаypal").
	CodeEmailMixedScript = "email.mixed_script"
)

// NewEmail validates and normalises s: trimmed, lower-cased, and folded to
// NFC (canonically equivalent spellings are the same text). It returns a
// KindInvalid error naming the field email when s is not a bare address
// (code email.invalid), or when it could pass for
// another address: invisible characters anywhere (CodeEmailInvisible), a
// spelling NFKC would change, such as fullwidth letters
// (CodeEmailNotNormalized), or a domain that is not a valid IDNA lookup
// name (INVALID_EMAIL) or whose labels mix scripts (CodeEmailMixedScript).
// Such addresses are refused rather than folded: a folded address is
// another mailbox than the one its owner typed, and verification mail
// would go there.
func NewEmail(s string) (Email, error) {
	s = strings.TrimSpace(s)
	bad := Invalid("email.invalid", "Invalid email", FieldViolation{Field: "email", Message: "must be a valid e-mail address"})
	if s == "" || len(s) > maxEmailLength || !utf8.ValidString(s) {
		return "", bad
	}
	if strings.IndexFunc(s, isInvisible) >= 0 {
		return "", Invalid(CodeEmailInvisible, "Invalid email: it contains invisible characters",
			FieldViolation{Field: "email", Message: "must not contain invisible characters (such as zero-width spaces)"})
	}
	s = norm.NFC.String(strings.ToLower(s))
	if !norm.NFKC.IsNormalString(s) {
		return "", Invalid(CodeEmailNotNormalized, "Invalid email: it contains look-alike characters such as fullwidth letters",
			FieldViolation{Field: "email", Message: "must be typed with plain characters (no fullwidth letters, ligatures or similar forms)"})
	}
	if len(s) > maxEmailLength {
		return "", bad
	}
	addr, err := mail.ParseAddress(s)
	// ParseAddress also accepts "Name <a@b>" and comments; only a bare address is an e-mail here.
	if err != nil || addr.Address != s || addr.Name != "" {
		return "", bad
	}
	local, host, ok := strings.Cut(s, "@")
	if !ok || local == "" || len(local) > 64 || !strings.Contains(host, ".") || strings.HasSuffix(host, ".") {
		return "", bad
	}
	if err := checkEmailDomain(host); err != nil {
		return "", err
	}
	return Email(s), nil
}

// String returns the address.
func (e Email) String() string { return string(e) }

// isInvisible reports whether r is a default-ignorable code point (UAX #44:
// format characters, variation selectors and the other invisible ones,
// such as U+200B–U+200D, U+2060, U+FEFF, U+00AD and the bidi controls) or
// a control character: none has a place in an address, and each lets two
// addresses that look the same differ.
func isInvisible(r rune) bool {
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Cc, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Variation_Selector, r)
}

// checkEmailDomain refuses a host that is not a valid IDNA lookup name
// (punycode labels included), or one with a label that mixes scripts.
func checkEmailDomain(host string) error {
	ascii, err := hostnameProfile.ToASCII(host)
	if err != nil {
		return Invalid("email.invalid", "Invalid email", FieldViolation{Field: "email", Message: "must have a valid domain name"})
	}
	// Checking the decoded form catches a look-alike written in punycode
	// ("xn--pypal-4ve.com") as well as one written in Unicode.
	uni, err := hostnameProfile.ToUnicode(ascii)
	if err != nil {
		return Invalid("email.invalid", "Invalid email", FieldViolation{Field: "email", Message: "must have a valid domain name"})
	}
	for label := range strings.SplitSeq(uni, ".") {
		if !isSingleScript(label) {
			return Invalid(CodeEmailMixedScript, "Invalid email: its domain mixes alphabets, as look-alike domains do",
				FieldViolation{Field: "email", Message: "must not mix scripts within a part of the domain (such as Latin and Cyrillic letters)"})
		}
	}
	return nil
}

// scriptSet is a set of scripts, one bit each; scriptOther stands for any
// script outside namedScripts.
type scriptSet uint8

const (
	scriptLatin scriptSet = 1 << iota
	scriptHan
	scriptHiragana
	scriptKatakana
	scriptBopomofo
	scriptHangul
	scriptOther // any other script; two different ones are tracked by name
)

// The script combinations UTS #39 §5.2 allows at its "highly restrictive"
// level besides a single script: Japanese, Chinese and Korean writing, each
// with Latin.
var allowedScriptMixes = []scriptSet{
	scriptLatin | scriptHan | scriptHiragana | scriptKatakana,
	scriptLatin | scriptHan | scriptBopomofo,
	scriptLatin | scriptHan | scriptHangul,
}

var namedScripts = []struct {
	table *unicode.RangeTable
	bit   scriptSet
}{
	{unicode.Latin, scriptLatin}, {unicode.Han, scriptHan}, {unicode.Hiragana, scriptHiragana},
	{unicode.Katakana, scriptKatakana}, {unicode.Bopomofo, scriptBopomofo}, {unicode.Hangul, scriptHangul},
}

// isSingleScript reports whether label passes UTS #39's highly restrictive
// level: its letters (Common and Inherited characters such as digits,
// hyphens and combining marks do not count) come from one script, or from
// one of allowedScriptMixes.
func isSingleScript(label string) bool {
	var set scriptSet
	other := "" // the one script outside namedScripts seen so far
	for _, r := range label {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
				set |= scriptLatin
			}
			continue
		}
		if unicode.Is(unicode.Common, r) || unicode.Is(unicode.Inherited, r) {
			continue
		}
		bit, name := scriptOf(r)
		if bit == scriptOther {
			if other != "" && other != name {
				return false
			}
			other = name
		}
		set |= bit
	}
	if set&(set-1) == 0 { // no script, or exactly one
		return true
	}
	for _, allowed := range allowedScriptMixes {
		if set&^allowed == 0 {
			return true
		}
	}
	return false
}

// scriptOf returns r's script: its bit, and its name when it is none of
// namedScripts ("Unknown" for unassigned code points).
func scriptOf(r rune) (scriptSet, string) {
	for _, s := range namedScripts {
		if unicode.Is(s.table, r) {
			return s.bit, ""
		}
	}
	for name, table := range unicode.Scripts {
		if name != "Common" && name != "Inherited" && unicode.Is(table, r) {
			return scriptOther, name
		}
	}
	return scriptOther, "Unknown"
}
