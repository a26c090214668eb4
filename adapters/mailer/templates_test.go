package mailer_test

import (
	"html"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/gatehouse/gatehouse/adapters/mailer"
	"github.com/gatehouse/gatehouse/domain"
)

const (
	ignoreLine           = "If you did not ask for this, ignore this mail."
	invitationIgnoreLine = "If you did not expect this invitation, ignore this mail."
)

// ignoreLineOf returns the closing line of a mail of kind.
func ignoreLineOf(kind domain.MailKind) string {
	if kind == domain.MailInvitation {
		return invitationIgnoreLine
	}
	return ignoreLine
}

// mailOf returns a valid mail of kind for tests. An invitation has no Name
// (the recipient may have no account) but an Organization and an Inviter.
func mailOf(kind domain.MailKind, to domain.Email) domain.Mail {
	m := domain.Mail{Kind: kind, To: to, Name: "Jane Doe"}
	if kind != domain.MailAccountExists {
		m.Link = "https://auth.example.test/api/auth/" + string(kind) + "?token=tok-" + string(kind) + "&callbackURL=%2Fdone"
		m.ExpiresIn = time.Hour
	}
	if kind == domain.MailInvitation {
		m.Name = ""
		m.Organization = "Acme Corp"
		m.Inviter = "Ada Lovelace"
	}
	return m
}

var allKinds = []domain.MailKind{
	domain.MailVerifyEmail,
	domain.MailChangeEmail,
	domain.MailResetPassword,
	domain.MailDeleteUser,
	domain.MailAccountExists,
	domain.MailInvitation,
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
			greeting := "Hi Jane Doe,"
			if kind == domain.MailInvitation {
				greeting = "Hello,"
			}
			for name, body := range map[string]string{"text": text, "html": html.UnescapeString(htmlBody)} {
				if !strings.Contains(body, greeting) {
					t.Errorf("%s lacks the greeting %q:\n%s", name, greeting, body)
				}
				if want := ignoreLineOf(kind); !strings.Contains(body, want) {
					t.Errorf("%s lacks %q:\n%s", name, want, body)
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
		kind    domain.MailKind // reset-password when empty
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
		{name: "invitation_missing_link", kind: domain.MailInvitation, edit: func(m *domain.Mail) { m.Link = "" }},
		{name: "invitation_javascript_link", kind: domain.MailInvitation, edit: func(m *domain.Mail) { m.Link = "javascript:alert(1)" }},
		{name: "invitation_zero_expiry", kind: domain.MailInvitation, edit: func(m *domain.Mail) { m.ExpiresIn = 0 }},
		{name: "invitation_negative_expiry", kind: domain.MailInvitation, edit: func(m *domain.Mail) { m.ExpiresIn = -time.Hour }},
		{name: "invitation_missing_organization", kind: domain.MailInvitation, edit: func(m *domain.Mail) { m.Organization = "" }},
		{name: "invitation_blank_organization", kind: domain.MailInvitation, edit: func(m *domain.Mail) { m.Organization = " \r\n\t\u202e " }},
		{name: "invitation_product_with_newline", kind: domain.MailInvitation, product: "Evil\r\nBcc: x@y.test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			kind := tt.kind
			if kind == "" {
				kind = domain.MailResetPassword
			}
			m := mailOf(kind, "jane@example.test")
			if tt.edit != nil {
				tt.edit(&m)
			}
			if _, _, _, err := mailer.Render(m, tt.product); err == nil {
				t.Fatal("Render succeeded, want an error")
			}
		})
	}
}

func TestRender_invitation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		edit        func(m *domain.Mail)
		product     string
		wantSubject string
		wantText    string
	}{
		{
			name:        "with_inviter",
			wantSubject: "Ada Lovelace invited you to join Acme Corp on Gatehouse",
			wantText:    "Ada Lovelace invited you to join the organization Acme Corp on Gatehouse. To accept the invitation, open this link:",
		},
		{
			name:        "without_inviter",
			edit:        func(m *domain.Mail) { m.Inviter = "" },
			wantSubject: "You are invited to join Acme Corp on Gatehouse",
			wantText:    "You have been invited to join the organization Acme Corp on Gatehouse.",
		},
		{
			name:        "blank_inviter",
			edit:        func(m *domain.Mail) { m.Inviter = "\r\n \u200b" },
			wantSubject: "You are invited to join Acme Corp on Gatehouse",
		},
		{
			name:        "product_name",
			product:     "Acme ID",
			wantSubject: "Ada Lovelace invited you to join Acme Corp on Acme ID",
		},
		{
			name:        "seven_days",
			edit:        func(m *domain.Mail) { m.ExpiresIn = 7 * 24 * time.Hour },
			wantSubject: "Ada Lovelace invited you to join Acme Corp on Gatehouse",
			wantText:    "This link works for 7 days.",
		},
		{
			name:        "name_given_anyway",
			edit:        func(m *domain.Mail) { m.Name = "Jane Doe" },
			wantSubject: "Ada Lovelace invited you to join Acme Corp on Gatehouse",
			wantText:    "Hi Jane Doe,",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := mailOf(domain.MailInvitation, "new@example.test")
			if tt.edit != nil {
				tt.edit(&m)
			}
			subject, text, htmlBody, err := mailer.Render(m, tt.product)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if subject != tt.wantSubject {
				t.Errorf("subject = %q, want %q", subject, tt.wantSubject)
			}
			if tt.wantText != "" && !strings.Contains(text, tt.wantText) {
				t.Errorf("text lacks %q:\n%s", tt.wantText, text)
			}
			if !strings.Contains(htmlBody, ">Accept invitation</a>") {
				t.Errorf("HTML lacks the accept button:\n%s", htmlBody)
			}
			if !strings.Contains(htmlBody, "<title>"+html.EscapeString(tt.wantSubject)+"</title>") {
				t.Errorf("HTML title is not the subject:\n%s", htmlBody)
			}
			if strings.Contains(text, ignoreLine) || strings.Contains(htmlBody, ignoreLine) {
				t.Errorf("an invitation must not say the recipient asked for it:\n%s", text)
			}
		})
	}
}

func TestRender_invitation_escapes_names_in_html(t *testing.T) {
	t.Parallel()
	m := mailOf(domain.MailInvitation, "new@example.test")
	m.Organization = `<script>alert("org")</script>`
	m.Inviter = `<img src=x onerror=alert(1)> & "Eve"`
	subject, text, htmlBody, err := mailer.Render(m, "")
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	for _, raw := range []string{"<script", "<img", `"Eve"`} {
		if strings.Contains(htmlBody, raw) {
			t.Errorf("HTML contains the raw %q:\n%s", raw, htmlBody)
		}
	}
	for _, escaped := range []string{
		"&lt;script&gt;alert(&#34;org&#34;)&lt;/script&gt;",
		"&lt;img src=x onerror=alert(1)&gt; &amp; &#34;Eve&#34;",
	} {
		// Once in the title, once in the body.
		if n := strings.Count(htmlBody, escaped); n != 2 {
			t.Errorf("HTML contains %q %d times, want 2:\n%s", escaped, n, htmlBody)
		}
	}
	// Text and subject are plain text: they show the names as written.
	if !strings.Contains(text, m.Inviter+" invited you to join the organization "+m.Organization) {
		t.Errorf("text should show the names as written:\n%s", text)
	}
	if want := m.Inviter + " invited you to join " + m.Organization + " on Gatehouse"; subject != want {
		t.Errorf("subject = %q, want %q", subject, want)
	}
}

// Ensure user-chosen names cannot add headers or lines to the Subject, nor
// hide text behind bidi overrides.
func TestRender_invitation_names_cannot_break_subject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		org, inv    string
		wantSubject string
	}{
		{name: "crlf", org: "Acme\r\nBcc: evil@example.test", inv: "Eve\r\nX-Injected: 1",
			wantSubject: "Eve X-Injected: 1 invited you to join Acme Bcc: evil@example.test on Gatehouse"},
		{name: "lf_only", org: "Acme\nBcc: evil@example.test", inv: "Eve\n\nbody",
			wantSubject: "Eve body invited you to join Acme Bcc: evil@example.test on Gatehouse"},
		{name: "cr_only", org: "Acme\rBcc: evil@example.test", inv: "Eve",
			wantSubject: "Eve invited you to join Acme Bcc: evil@example.test on Gatehouse"},
		{name: "unicode_line_breaks", org: "Acme\u2028Bcc: x\u0085y\u2029z", inv: "Eve\vF\fG",
			wantSubject: "Eve F G invited you to join Acme Bcc: x y z on Gatehouse"},
		{name: "nul_and_tabs", org: "Acme\x00\tCorp", inv: "Eve\x1b[31m",
			wantSubject: "Eve [31m invited you to join Acme Corp on Gatehouse"},
		{name: "bidi_override", org: "Acme\u202egnp.exe", inv: "\u2066Eve\u2069",
			wantSubject: "Eve invited you to join Acme gnp.exe on Gatehouse"},
		{name: "encoded_word", org: "Acme =?UTF-8?q?=0D=0ABcc:_x@y.test?=", inv: "=?utf-8?b?4oCu?=",
			wantSubject: "= ?utf-8?b?4oCu?= invited you to join Acme = ?UTF-8?q?=0D=0ABcc:_x@y.test?= on Gatehouse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := mailOf(domain.MailInvitation, "new@example.test")
			m.Organization, m.Inviter = tt.org, tt.inv
			subject, text, _, err := mailer.Render(m, "")
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if subject != tt.wantSubject {
				t.Errorf("subject = %q, want %q", subject, tt.wantSubject)
			}
			if i := strings.IndexFunc(subject, func(r rune) bool {
				return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || (unicode.IsSpace(r) && r != ' ')
			}); i >= 0 {
				t.Errorf("subject %q has a control, format or line-breaking character at %d", subject, i)
			}
			// The body shows the same cleaned names.
			if strings.Contains(text, "\r") || strings.Contains(text, "\u202e") {
				t.Errorf("text keeps a CR or a bidi override:\n%q", text)
			}
		})
	}
}

func TestRender_invitation_truncates_long_names(t *testing.T) {
	t.Parallel()
	m := mailOf(domain.MailInvitation, "new@example.test")
	m.Organization = strings.Repeat("o", 5000)
	m.Inviter = strings.Repeat("i", 5000)
	subject, text, htmlBody, err := mailer.Render(m, "")
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	want := strings.Repeat("i", 64) + "… invited you to join " + strings.Repeat("o", 64) + "… on Gatehouse"
	if subject != want {
		t.Errorf("subject = %q, want %q", subject, want)
	}
	for name, body := range map[string]string{"text": text, "html": htmlBody} {
		if strings.Contains(body, strings.Repeat("o", 65)) || strings.Contains(body, strings.Repeat("i", 65)) {
			t.Errorf("%s contains an untruncated name", name)
		}
	}
}

// TestRender_factors_reset: the mail of an operator's reset of the user's
// second factors has no link and no code, says what went, and tells a user
// who did not ask to contact their administrator.
func TestRender_factors_reset(t *testing.T) {
	t.Parallel()
	m := domain.Mail{Kind: domain.MailFactorsReset, To: "jane@example.test", Name: "Jane Doe"}
	subject, text, htmlBody, err := mailer.Render(m, "Acme ID")
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if subject != "Your Acme ID second factors were reset" {
		t.Errorf("subject = %q", subject)
	}
	for name, body := range map[string]string{"text": text, "html": html.UnescapeString(htmlBody)} {
		for _, want := range []string{"Hi Jane Doe,", "passkeys", "signed out everywhere", "contact your administrator"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, body)
			}
		}
		if strings.Contains(body, "http") || strings.Contains(body, ignoreLine) {
			t.Errorf("%s has a link or the usual closing line:\n%s", name, body)
		}
	}
}

// TestRender_webhook_disabled: the mail to an administrator about a webhook
// endpoint disabled for failing names the endpoint by URL and id, has no
// link to follow, says how to enable it and replay, and refuses to render
// without the endpoint. The URL is escaped in HTML like any text.
func TestRender_webhook_disabled(t *testing.T) {
	t.Parallel()
	m := domain.Mail{Kind: domain.MailWebhookDisabled, To: "ops@example.test", WebhookID: "0192-ep",
		WebhookURL: "https://hooks.example.com/in?a=1&b=<2>"}
	subject, text, htmlBody, err := mailer.Render(m, "Acme ID")
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if subject != "A Acme ID webhook endpoint was disabled" {
		t.Errorf("subject = %q", subject)
	}
	if strings.Contains(htmlBody, "<2>") || strings.Contains(htmlBody, "href") {
		t.Errorf("the HTML carries the URL unescaped or as a link:\n%s", htmlBody)
	}
	for name, body := range map[string]string{"text": text, "html": html.UnescapeString(htmlBody)} {
		for _, want := range []string{"Hello,", "https://hooks.example.com/in?a=1&b=<2>", "0192-ep", "PATCH /api/webhooks/0192-ep", "platform administrator"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, body)
			}
		}
	}
	m.WebhookURL = ""
	if _, _, _, err := mailer.Render(m, "Acme ID"); err == nil {
		t.Error("rendered a webhook-disabled mail without its endpoint")
	}
}
