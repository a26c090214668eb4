package mailer

import (
	"context"
	"log/slog"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.Mailer = (*Log)(nil)

// Log is the development mailer: it sends nothing and writes one info line
// per mail with the kind, the recipient and the link, which is what a
// developer needs to follow the flow locally. Never use it in production: the
// link is a credential.
type Log struct {
	logger *slog.Logger
}

// NewLog returns a Log that writes to logger (slog.Default() when nil).
func NewLog(logger *slog.Logger) *Log {
	if logger == nil {
		logger = slog.Default()
	}
	return &Log{logger: logger}
}

// Send renders m, so a broken mail fails here as it would in production, and
// logs it.
func (l *Log) Send(ctx context.Context, m domain.Mail) error {
	subject, _, _, err := Render(m, "")
	if err != nil {
		return domain.Internal("mailer: render", err)
	}
	attrs := []slog.Attr{
		slog.String("kind", string(m.Kind)),
		slog.String("to", string(m.To)),
		slog.String("subject", subject),
	}
	if m.Link != "" {
		attrs = append(attrs,
			slog.String("link", m.Link),
			slog.Int64("expires_in_ms", m.ExpiresIn.Milliseconds()),
		)
	}
	l.logger.LogAttrs(ctx, slog.LevelInfo, "mail (development mailer: not sent)", attrs...)
	return nil
}
