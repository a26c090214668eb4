package bootstrap

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// setting is one configuration setting: its environment variable, its flag
// (without dashes), its default and what it means. Each is declared once,
// in the list of the section that reads it; -help and docs/configuration.md
// come from the same facts.
type setting struct {
	env, flag, def, usage string
	secret                bool // shown in process lists when given as a flag
	boolean               bool // true or false: a boolean flag (see boolText)
}

// settingList is a section's settings, in the order they are documented.
type settingList []*setting

// add declares a setting of the section.
func (l *settingList) add(env, flag, def, usage string) *setting {
	s := &setting{env: env, flag: flag, def: def, usage: usage}
	*l = append(*l, s)
	return s
}

// addBool declares a true-or-false setting: its flag is a boolean flag,
// whose bare form means true. Its reader (reader.boolean or reader.switched)
// still decides which words it accepts.
func (l *settingList) addBool(env, flag, def, usage string) *setting {
	s := l.add(env, flag, def, usage)
	s.boolean = true
	return s
}

// boolText is a boolean setting's flag. The flag package takes it for a
// boolean (IsBoolFlag): -help shows no placeholder and the bare flag sets
// "true"; a value goes after "=" (--rate-limit=off). It keeps the text as
// given, which the setting's reader checks as it checks the variable, so
// that the flag and the variable accept the same words.
type boolText string

func (b *boolText) String() string {
	if b == nil {
		return ""
	}
	return string(*b)
}

func (b *boolText) Set(v string) error { *b = boolText(v); return nil }

// IsBoolFlag makes the flag package read the flag as a boolean.
func (b *boolText) IsBoolFlag() bool { return true }

// addSecret declares a setting whose value is a secret.
func (l *settingList) addSecret(env, flag, usage string) *setting {
	s := l.add(env, flag, "", usage)
	s.secret = true
	return s
}

// durationText writes d as a setting's default is written: "120h", "5m",
// "2h30m", "100ms" (time.Duration's String without its zero minutes and
// seconds), so that a default is the application's own constant, not a
// second copy of it.
func durationText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// durationsText writes a list of durations as a comma-separated default.
func durationsText(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = durationText(d)
	}
	return strings.Join(parts, ",")
}

// reader reads settings for the sections' load methods: one typed helper
// per kind of value, each recording a problem, naming the setting, when the
// value is wrong and returning the zero value then.
type reader struct {
	get func(env string) string // the value, trimmed; the default when unset
	p   *problems
	env Environment // the environment being loaded, for rules that depend on it
}

// fail records that s is wrong.
func (r *reader) fail(s *setting, msg string) { r.p.add(s.env, msg) }

// failed reports whether any of ss was found wrong. What derives from a
// wrong setting is not checked, so that one mistake is reported once.
func (r *reader) failed(ss ...*setting) bool {
	for _, s := range ss {
		if r.p.has(s.env) {
			return true
		}
	}
	return false
}

// production reports whether production is being loaded.
func (r *reader) production() bool { return r.env == Production }

// text reads s as it is.
func (r *reader) text(s *setting) string { return r.get(s.env) }

// list reads s as a comma-separated list, dropping blanks.
func (r *reader) list(s *setting) []string { return splitList(r.get(s.env)) }

// duration reads s as a duration from lo to hi; example is a valid value
// named in the problem.
func (r *reader) duration(s *setting, lo, hi time.Duration, example string) time.Duration {
	return r.durationOr(s, lo, hi, fmt.Sprintf("must be a duration from %s to %s, such as %s", lo, hi, example))
}

// durationOr reads s as a duration from lo to hi, with msg as the problem.
func (r *reader) durationOr(s *setting, lo, hi time.Duration, msg string) time.Duration {
	v, err := time.ParseDuration(r.get(s.env))
	if err != nil || v < lo || v > hi {
		r.fail(s, msg)
		return 0
	}
	return v
}

// integer reads s as a whole number from lo to hi.
func (r *reader) integer(s *setting, lo, hi int) int {
	v, err := strconv.Atoi(r.get(s.env))
	if err != nil || v < lo || v > hi {
		r.fail(s, fmt.Sprintf("must be a whole number from %d to %d", lo, hi))
		return 0
	}
	return v
}

// switched reads s as a switch: one of on (true) or off (false), with msg
// as the problem for anything else.
func (r *reader) switched(s *setting, on, off []string, msg string) bool {
	v := r.get(s.env)
	for _, w := range on {
		if v == w {
			return true
		}
	}
	for _, w := range off {
		if v == w {
			return false
		}
	}
	r.fail(s, msg)
	return false
}

// boolean reads s as strconv.ParseBool does.
func (r *reader) boolean(s *setting) bool {
	v, err := strconv.ParseBool(r.get(s.env))
	if err != nil {
		r.fail(s, "must be true or false")
	}
	return v
}

// parsed reads s with parse, recording its error as the problem.
func parsed[T any](r *reader, s *setting, parse func(string) (T, error)) T {
	v, err := parse(r.get(s.env))
	if err != nil {
		r.fail(s, err.Error())
	}
	return v
}

// splitList splits a comma-separated setting, dropping blanks.
func splitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
