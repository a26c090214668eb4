package mailer_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/mailer"
	"github.com/gatehouse/gatehouse/adapters/mailer/smtptest"
	"github.com/gatehouse/gatehouse/domain"
)

// mustSMTP returns an SMTP mailer for srv without TLS (it is on loopback).
func mustSMTP(t *testing.T, srv *smtptest.Server, edit func(c *mailer.Config)) *mailer.SMTP {
	t.Helper()
	cfg := mailer.Config{
		Host:    srv.Host(),
		Port:    srv.Port(),
		TLSMode: mailer.TLSModeNone,
		From:    "Gatehouse <noreply@gatehouse.test>",
		Timeout: 5 * time.Second,
	}
	if edit != nil {
		edit(&cfg)
	}
	s, err := mailer.NewSMTP(cfg)
	if err != nil {
		t.Fatalf("NewSMTP: %v", err)
	}
	return s
}

// Ensure every kind of mail arrives as multipart text and HTML with its link.
func TestSMTP_round_trip(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t)
	s := mustSMTP(t, srv, nil)
	for _, kind := range allKinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			to := domain.Email(string(kind) + "@example.test")
			m := mailOf(kind, to)
			// An invitation greets nobody by name but names the inviter.
			wantText, wantHTML := "Hi Jöhn <b>O'Brien</b>,", "Jöhn &lt;b&gt;O&#39;Brien&lt;/b&gt;"
			if kind == domain.MailInvitation {
				m.Inviter = "Jöhn <b>O'Brien</b>"
				m.Organization = "Smith & Söhne"
				wantText = "Jöhn <b>O'Brien</b> invited you to join the organization Smith & Söhne on Gatehouse."
				wantHTML = "Jöhn &lt;b&gt;O&#39;Brien&lt;/b&gt; invited you to join the organization Smith &amp; Söhne on Gatehouse."
			} else {
				m.Name = "Jöhn <b>O'Brien</b>"
			}
			if err := s.Send(context.Background(), m); err != nil {
				t.Fatalf("Send: %v", err)
			}
			wantSubject, _, _, _ := mailer.Render(m, "")
			got := srv.WaitFor(t, string(to), wantSubject, 5*time.Second)

			if got.Subject != wantSubject {
				t.Errorf("Subject = %q, want %q", got.Subject, wantSubject)
			}
			if len(got.To) != 1 || got.To[0] != string(to) {
				t.Errorf("To = %v, want [%s]", got.To, to)
			}
			if !strings.Contains(got.From, "noreply@gatehouse.test") {
				t.Errorf("From = %q", got.From)
			}
			if !strings.Contains(got.Raw, "multipart/alternative") {
				t.Errorf("not multipart/alternative:\n%s", got.Raw)
			}
			if !strings.Contains(got.Text, wantText) {
				t.Errorf("text part lacks %q:\n%s", wantText, got.Text)
			}
			if !strings.Contains(got.HTML, wantHTML) {
				t.Errorf("HTML part lacks %q:\n%s", wantHTML, got.HTML)
			}
			if !strings.Contains(got.HTML, "</html>") || !strings.Contains(got.Text, ignoreLineOf(kind)) {
				t.Errorf("parts are incomplete:\ntext: %s\nhtml: %s", got.Text, got.HTML)
			}
			links := got.Links()
			if kind == domain.MailAccountExists {
				if len(links) != 0 {
					t.Errorf("Links = %v, want none", links)
				}
				return
			}
			if len(links) != 1 || links[0] != m.Link {
				t.Errorf("Links = %v, want [%s]", links, m.Link)
			}
		})
	}
}

func TestSMTP_long_lines_and_dots_survive(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t)
	s := mustSMTP(t, srv, func(c *mailer.Config) { c.ProductName = "Gatehouse" })
	m := mailOf(domain.MailResetPassword, "dots@example.test")
	m.Link = "https://auth.example.test/reset/" + strings.Repeat("a1.", 60) + "?token=" + strings.Repeat("x", 120)
	if err := s.Send(context.Background(), m); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := srv.WaitFor(t, "dots@example.test", "Reset", 5*time.Second)
	if links := got.Links(); len(links) != 1 || links[0] != m.Link {
		t.Errorf("Links = %v, want [%s]", links, m.Link)
	}
}

// Ensure an invitation's user-chosen names, which go into the Subject, cannot
// add headers or recipients, nor smuggle characters back in as RFC 2047
// encoded words.
func TestSMTP_invitation_names_cannot_inject_headers(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t)
	s := mustSMTP(t, srv, nil)
	tests := []struct {
		name     string
		org, inv string
	}{
		{name: "crlf", org: "Acme\r\nBcc: evil@example.test\r\nX-Injected: org", inv: "Eve\r\nX-Injected: inviter"},
		{name: "lf", org: "Acme\nBcc: evil@example.test", inv: "Eve\n\nX-Injected: body"},
		{name: "non_ascii_and_crlf", org: "Söhne\r\nBcc: evil@example.test", inv: "Jöhn\r\nX-Injected: q"},
		{name: "encoded_word", org: "Acme =?UTF-8?q?=0D=0ABcc:_evil@example.test?=", inv: "=?UTF-8?q?=E2=80=AEEve?="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			to := domain.Email("inj-" + tt.name + "@example.test")
			m := mailOf(domain.MailInvitation, to)
			m.Organization, m.Inviter = tt.org, tt.inv
			if err := s.Send(context.Background(), m); err != nil {
				t.Fatalf("Send: %v", err)
			}
			wantSubject, _, _, err := mailer.Render(m, "")
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			got := srv.WaitFor(t, string(to), "on Gatehouse", 5*time.Second)
			if got.Subject != wantSubject {
				t.Errorf("Subject = %q, want %q", got.Subject, wantSubject)
			}
			if strings.ContainsAny(got.Subject, "\r\n\u202e") {
				t.Errorf("decoded Subject %q has a line break or bidi override", got.Subject)
			}
			if len(got.To) != 1 || got.To[0] != string(to) {
				t.Errorf("envelope To = %v, want [%s]", got.To, to)
			}
			header, _, _ := strings.Cut(strings.ReplaceAll(got.Raw, "\r\n", "\n"), "\n\n")
			for _, line := range strings.Split(header, "\n") {
				if name, _, _ := strings.Cut(line, ":"); strings.EqualFold(name, "Bcc") || strings.EqualFold(name, "X-Injected") {
					t.Errorf("injected header %q:\n%s", line, header)
				}
			}
			if n := strings.Count(strings.ToLower(header), "\nsubject:"); n != 1 {
				t.Errorf("%d Subject headers:\n%s", n, header)
			}
		})
	}
	for _, msg := range srv.Messages() {
		if msg.IsTo("evil@example.test") {
			t.Errorf("a mail went to the injected recipient: %q", msg.Subject)
		}
	}
}

func TestNewSMTP_config(t *testing.T) {
	t.Parallel()
	valid := mailer.Config{Host: "smtp.example.test", From: "noreply@example.test"}
	tests := []struct {
		name    string
		edit    func(c *mailer.Config)
		wantErr bool
	}{
		{name: "defaults_to_starttls", edit: func(c *mailer.Config) {}},
		{name: "starttls", edit: func(c *mailer.Config) { c.TLSMode = "starttls"; c.Port = 587 }},
		{name: "implicit_tls", edit: func(c *mailer.Config) { c.TLSMode = "tls"; c.Port = 465 }},
		{name: "none_on_remote_host_refused", edit: func(c *mailer.Config) { c.TLSMode = "none" }, wantErr: true},
		{name: "none_on_remote_host_allowed_insecure", edit: func(c *mailer.Config) { c.TLSMode = "none"; c.AllowInsecure = true }},
		{name: "none_on_localhost", edit: func(c *mailer.Config) { c.TLSMode = "none"; c.Host = "localhost" }},
		{name: "none_on_ipv4_loopback", edit: func(c *mailer.Config) { c.TLSMode = "none"; c.Host = "127.0.0.1" }},
		{name: "none_on_ipv6_loopback", edit: func(c *mailer.Config) { c.TLSMode = "none"; c.Host = "::1" }},
		{name: "none_on_name_resolving_anywhere", edit: func(c *mailer.Config) { c.TLSMode = "none"; c.Host = "localhost.example.test" }, wantErr: true},
		{name: "unknown_mode", edit: func(c *mailer.Config) { c.TLSMode = "ssl" }, wantErr: true},
		{name: "missing_host", edit: func(c *mailer.Config) { c.Host = "" }, wantErr: true},
		{name: "port_too_large", edit: func(c *mailer.Config) { c.Port = 70000 }, wantErr: true},
		{name: "from_with_name", edit: func(c *mailer.Config) { c.From = "Gatehouse <noreply@example.test>" }},
		{name: "from_missing", edit: func(c *mailer.Config) { c.From = "" }, wantErr: true},
		{name: "from_not_an_address", edit: func(c *mailer.Config) { c.From = "noreply" }, wantErr: true},
		{name: "password_without_username", edit: func(c *mailer.Config) { c.Password = "secret" }, wantErr: true},
		{name: "product_with_newline", edit: func(c *mailer.Config) { c.ProductName = "A\nB" }, wantErr: true},
		{name: "negative_timeout", edit: func(c *mailer.Config) { c.Timeout = -time.Second }, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := valid
			tt.edit(&cfg)
			s, err := mailer.NewSMTP(cfg)
			if tt.wantErr {
				if !errors.Is(err, domain.ErrInvalid) {
					t.Fatalf("NewSMTP = %v, want an invalid error", err)
				}
				return
			}
			if err != nil || s == nil {
				t.Fatalf("NewSMTP: %v", err)
			}
		})
	}
}

// Ensure a connection that cannot be secured as configured is never used.
func TestSMTP_unavailable(t *testing.T) {
	t.Parallel()
	const password = "hunter2-very-secret"
	srv := smtptest.Start(t)
	closed := closedPort(t)
	tests := []struct {
		name string
		edit func(c *mailer.Config)
	}{
		{name: "starttls_not_offered", edit: func(c *mailer.Config) { c.TLSMode = mailer.TLSModeSTARTTLS }},
		{name: "implicit_tls_to_plain_server", edit: func(c *mailer.Config) { c.TLSMode = mailer.TLSModeTLS }},
		{name: "plain_auth_refused_unencrypted", edit: func(c *mailer.Config) { c.Username = "gatehouse"; c.Password = password }},
		{name: "connection_refused", edit: func(c *mailer.Config) { c.Port = closed }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := mustSMTP(t, srv, tt.edit)
			to := domain.Email(tt.name + "@example.test")
			err := s.Send(context.Background(), mailOf(domain.MailResetPassword, to))
			if !errors.Is(err, domain.ErrUnavailable) {
				t.Fatalf("Send = %v, want an unavailable error", err)
			}
			var de *domain.Error
			if !errors.As(err, &de) || de.Code != "mail.unavailable" || de.Err == nil {
				t.Fatalf("Send = %#v, want code mail.unavailable with a cause", err)
			}
			if msg := err.Error(); strings.Contains(msg, password) || strings.Contains(msg, string(to)) {
				t.Errorf("error leaks the password or the recipient: %s", msg)
			}
		})
	}
	for _, m := range srv.Messages() {
		t.Errorf("a mail was delivered: %q to %v", m.Subject, m.To)
	}
}

// closedPort returns a loopback port nobody listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	return port
}
