package mailer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/adapters/mailer"
	"github.com/gatehouse/gatehouse/domain"
)

func TestLog_logs_the_link(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		kind     domain.MailKind
		wantLink bool
	}{
		{name: "reset_password", kind: domain.MailResetPassword, wantLink: true},
		{name: "account_exists", kind: domain.MailAccountExists},
		// The development mailer logs every link in full (it is the point of
		// it); the invitation's is no exception.
		{name: "invitation", kind: domain.MailInvitation, wantLink: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			l := mailer.NewLog(slog.New(slog.NewJSONHandler(&buf, nil)))
			m := mailOf(tt.kind, "jane@example.test")
			if err := l.Send(context.Background(), m); err != nil {
				t.Fatalf("Send: %v", err)
			}
			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("want one JSON line, got %q: %v", buf.String(), err)
			}
			if got, want := line["msg"], "mail (development mailer: not sent)"; got != want {
				t.Errorf("msg = %v, want %v", got, want)
			}
			if got, want := line["level"], "INFO"; got != want {
				t.Errorf("level = %v, want %v", got, want)
			}
			if got, want := line["kind"], string(tt.kind); got != want {
				t.Errorf("kind = %v, want %v", got, want)
			}
			if got, want := line["to"], "jane@example.test"; got != want {
				t.Errorf("to = %v, want %v", got, want)
			}
			if got, _ := line["link"].(string); tt.wantLink && got != m.Link {
				t.Errorf("link = %q, want %q", got, m.Link)
			}
			if _, ok := line["link"]; !tt.wantLink && ok {
				t.Errorf("link = %v, want none", line["link"])
			}
			if wantSubject, _, _, _ := mailer.Render(m, ""); line["subject"] != wantSubject {
				t.Errorf("subject = %v, want %q", line["subject"], wantSubject)
			}
		})
	}
}

func TestLog_rejects_broken_mail(t *testing.T) {
	t.Parallel()
	l := mailer.NewLog(slog.New(slog.DiscardHandler))
	m := mailOf(domain.MailVerifyEmail, "jane@example.test")
	m.Link = ""
	if err := l.Send(context.Background(), m); domain.KindOf(err) != domain.KindInternal || err == nil {
		t.Fatalf("Send = %v, want an internal error", err)
	}
}

// Ensure an invitation's user-chosen names cannot forge log lines.
func TestLog_invitation_names_stay_on_one_line(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := mailer.NewLog(slog.New(slog.NewTextHandler(&buf, nil)))
	m := mailOf(domain.MailInvitation, "new@example.test")
	m.Organization = "Acme\nlevel=ERROR msg=forged"
	m.Inviter = "Eve\r\n"
	if err := l.Send(context.Background(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	out := buf.String()
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		t.Fatalf("want one log line, got %q", out)
	}
	if !strings.Contains(out, `subject="Eve invited you to join Acme level=ERROR msg=forged on Gatehouse"`) {
		t.Errorf("log line lacks the cleaned subject: %s", out)
	}
}

func TestLog_rejects_invitation_without_organization(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := mailer.NewLog(slog.New(slog.NewJSONHandler(&buf, nil)))
	m := mailOf(domain.MailInvitation, "new@example.test")
	m.Organization = ""
	if err := l.Send(context.Background(), m); domain.KindOf(err) != domain.KindInternal || err == nil {
		t.Fatalf("Send = %v, want an internal error", err)
	}
	if buf.Len() != 0 {
		t.Errorf("a broken mail was logged: %s", buf.String())
	}
}
