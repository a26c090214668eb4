package mailer_test

import (
	"html"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/mailer"
	"github.com/gatehouse/gatehouse/domain"
)

const ignoreLine = "If you did not ask for this, ignore this mail."

// mailOf returns a valid mail of kind for tests.
func mailOf(kind domain.MailKind, to domain.Email) domain.Mail {
	m := domain.Mail{Kind: kind, To: to, Name: "Jane Doe"}
	if kind != domain.MailAccountExists {
		m.Link = "https://auth.example.test/api/auth/" + string(kind) + "?token=tok-" + string(kind) + "&callbackURL=%2Fdone"
		m.ExpiresIn = time.Hour
	}
	return m
}

var allKinds = []domain.MailKind{
	domain.MailVerifyEmail,
	domain.MailChangeEmail,
	domain.MailResetPassword,
	domain.MailDeleteUser,
	domain.MailAccountExists,
}

func TestRender_every_kind(t *testing.T) {
	t.Parallel()
	for _, kind := range allKinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			m := mailOf(kind, "jane@example.test")
			subject, text, htmlBody, err := mailer.Render(m, "")
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if !strings.Contains(subject, "Gatehouse") {
				t.Errorf("subject %q does not name the product", subject)
			}
			for name, body := range map[string]string{"text": text, "html": html.UnescapeString(htmlBody)} {
				if !strings.Contains(body, "Jane Doe") {
					t.Errorf("%s does not greet the user:\n%s", name, body)
				}
				if !strings.Contains(body, ignoreLine) {
					t.Errorf("%s lacks %q:\n%s", name, ignoreLine, body)
				}
				if kind == domain.MailAccountExists {
					if strings.Contains(body, "http") || !strings.Contains(body, "reset your password") {
						t.Errorf("%s of account-exists should have no link and mention resetting the password:\n%s", name, body)
					}
					continue
				}
				if !strings.Contains(body, m.Link) {
					t.Errorf("%s lacks the link %q:\n%s", name, m.Link, body)
				}
				if !strings.Contains(body, "works for 1 hour.") {
					t.Errorf("%s does not say how long the link works:\n%s", name, body)
				}
			}
			if strings.Contains(htmlBody, "<img") || strings.Contains(htmlBody, "<script") {
				t.Errorf("HTML has images or scripts:\n%s", htmlBody)
			}
		})
	}
}

func TestRender_escapes_name_in_html(t *testing.T) {
	t.Parallel()
	m := mailOf(domain.MailResetPassword, "jane@example.test")
	m.Name = `<script>alert("x")</script>`
	_, text, htmlBody, err := mailer.Render(m, "")
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if strings.Contains(htmlBody, "<script>") {
		t.Errorf("HTML contains the raw name:\n%s", htmlBody)
	}
	if !strings.Contains(htmlBody, "&lt;script&gt;") {
		t.Errorf("HTML does not contain the escaped name:\n%s", htmlBody)
	}
	if !strings.Contains(text, m.Name) {
		t.Errorf("text should show the name as written:\n%s", text)
	}
}

func TestRender_options(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		edit      func(m *domain.Mail)
		product   string
		wantText  string
		wantNoTxt string
	}{
		{name: "product_name", product: "Acme ID", wantText: "Acme ID"},
		{name: "minutes", edit: func(m *domain.Mail) { m.ExpiresIn = 15 * time.Minute }, wantText: "works for 15 minutes."},
		{name: "one_hour", edit: func(m *domain.Mail) { m.ExpiresIn = time.Hour }, wantText: "works for 1 hour."},
		{name: "day_in_hours", edit: func(m *domain.Mail) { m.ExpiresIn = 24 * time.Hour }, wantText: "works for 24 hours."},
		{name: "hours_and_minutes", edit: func(m *domain.Mail) { m.ExpiresIn = 90 * time.Minute }, wantText: "works for 1 hour 30 minutes."},
		{name: "days", edit: func(m *domain.Mail) { m.ExpiresIn = 7 * 24 * time.Hour }, wantText: "works for 7 days."},
		{name: "rounds_down", edit: func(m *domain.Mail) { m.ExpiresIn = time.Hour - time.Second }, wantText: "works for 59 minutes."},
		{name: "no_name", edit: func(m *domain.Mail) { m.Name = "" }, wantText: "Hello,"},
		{name: "name_control_chars", edit: func(m *domain.Mail) { m.Name = "Jane\r\n\u202eDoe" }, wantText: "Hi Jane Doe,"},
		{name: "long_name_truncated", edit: func(m *domain.Mail) { m.Name = strings.Repeat("a", 500) }, wantNoTxt: strings.Repeat("a", 65)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := mailOf(domain.MailVerifyEmail, "jane@example.test")
			if tt.edit != nil {
				tt.edit(&m)
			}
			subject, text, _, err := mailer.Render(m, tt.product)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if tt.product != "" && !strings.Contains(subject, tt.product) {
				t.Errorf("subject %q lacks %q", subject, tt.product)
			}
			if tt.wantText != "" && !strings.Contains(text, tt.wantText) {
				t.Errorf("text lacks %q:\n%s", tt.wantText, text)
			}
			if tt.wantNoTxt != "" && strings.Contains(text, tt.wantNoTxt) {
				t.Errorf("text contains %q:\n%s", tt.wantNoTxt, text)
			}
		})
	}
}

func TestRender_rejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		edit    func(m *domain.Mail)
		product string
	}{
		{name: "unknown_kind", edit: func(m *domain.Mail) { m.Kind = "newsletter" }},
		{name: "missing_link", edit: func(m *domain.Mail) { m.Link = "" }},
		{name: "relative_link", edit: func(m *domain.Mail) { m.Link = "/reset?token=x" }},
		{name: "javascript_link", edit: func(m *domain.Mail) { m.Link = "javascript:alert(1)" }},
		{name: "link_with_space", edit: func(m *domain.Mail) { m.Link = "https://a.test/x y" }},
		{name: "zero_expiry", edit: func(m *domain.Mail) { m.ExpiresIn = 0 }},
		{name: "product_with_newline", product: "Evil\r\nBcc: x@y.test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := mailOf(domain.MailResetPassword, "jane@example.test")
			if tt.edit != nil {
				tt.edit(&m)
			}
			if _, _, _, err := mailer.Render(m, tt.product); err == nil {
				t.Fatal("Render succeeded, want an error")
			}
		})
	}
}
