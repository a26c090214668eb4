package mailer

import (
	"strings"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/domain"
)

// maskAddress hides most of an address for logs and errors: "jane@example.com"
// becomes "j***@example.com". The domain stays, because it is what explains
// most delivery failures.
func maskAddress(e domain.Email) string {
	local, host, ok := strings.Cut(string(e), "@")
	if !ok || local == "" {
		return "***"
	}
	_, size := utf8.DecodeRuneInString(local)
	return local[:size] + "***@" + host
}

// redactedError keeps its cause for errors.Is/As but replaces secrets (the
// password) and personal data (the recipient) in its message, which is what
// ends up in logs. go-mail names the affected recipients in its errors.
type redactedError struct {
	err         error
	secrets     []string // replaced by "[redacted]"
	recipient   string
	replacement string
}

func (e *redactedError) Error() string {
	msg := e.err.Error()
	for _, s := range e.secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	if e.recipient != "" {
		msg = strings.ReplaceAll(msg, e.recipient, e.replacement)
	}
	return msg
}

func (e *redactedError) Unwrap() error { return e.err }
