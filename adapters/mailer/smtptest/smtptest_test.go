package smtptest_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/mailer/smtptest"
)

// session is a raw SMTP client that checks each reply code.
type session struct {
	t *testing.T
	c *textproto.Conn
}

func dial(t *testing.T, srv *smtptest.Server) *session {
	t.Helper()
	c, err := textproto.Dial("tcp", net.JoinHostPort(srv.Host(), strconv.Itoa(srv.Port())))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	s := &session{t: t, c: c}
	s.expect(220)
	return s
}

func (s *session) expect(code int) {
	s.t.Helper()
	if _, _, err := s.c.ReadResponse(code); err != nil {
		s.t.Fatalf("want %d: %v", code, err)
	}
}

func (s *session) cmd(code int, format string, args ...any) {
	s.t.Helper()
	if err := s.c.PrintfLine(format, args...); err != nil {
		s.t.Fatal(err)
	}
	s.expect(code)
}

// data sends body lines as written, so the test controls dot-stuffing.
func (s *session) data(lines ...string) {
	s.t.Helper()
	s.cmd(354, "DATA")
	for _, l := range lines {
		if err := s.c.PrintfLine("%s", l); err != nil {
			s.t.Fatal(err)
		}
	}
	s.cmd(250, ".")
}

func TestServer_protocol_and_parsing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		body     []string
		wantSubj string
		wantText string
		wantHTML string
	}{
		{
			name: "plain_dot_stuffed",
			body: []string{
				"Subject: plain", "From: A <a@example.test>", "",
				"see https://a.example.test/x?y=1.", "..leading dot", "end",
			},
			wantSubj: "plain",
			wantText: "see https://a.example.test/x?y=1.\r\n.leading dot\r\nend\r\n",
		},
		{
			name: "alternative_base64_and_qp",
			body: []string{
				"Subject: =?UTF-8?q?J=C3=B6rg?=", "MIME-Version: 1.0",
				`Content-Type: multipart/alternative; boundary="b1"`, "",
				"--b1", "Content-Type: text/plain; charset=UTF-8", "Content-Transfer-Encoding: base64", "",
				"aHR0cHM6Ly9hLmV4YW1wbGUu", "dGVzdC9y",
				"--b1", "Content-Type: text/html; charset=UTF-8", "Content-Transfer-Encoding: quoted-printable", "",
				`<a href=3D"x">l=`, "ink</a>",
				"--b1--",
			},
			wantSubj: "Jörg",
			wantText: "https://a.example.test/r",
			wantHTML: `<a href="x">link</a>`,
		},
		{
			name: "nested_mixed",
			body: []string{
				"Subject: nested", `Content-Type: multipart/mixed; boundary="outer"`, "",
				"--outer", `Content-Type: multipart/alternative; boundary="inner"`, "",
				"--inner", "Content-Type: text/plain", "", "hello", "--inner--",
				"--outer", "Content-Type: application/pdf", "", "ignored", "--outer--",
			},
			wantSubj: "nested",
			wantText: "hello",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := smtptest.Start(t)
			s := dial(t, srv)
			s.cmd(250, "EHLO client.example.test")
			s.cmd(503, "RCPT TO:<x@example.test>") // before MAIL
			s.cmd(250, "MAIL FROM:<a@example.test> BODY=8BITMIME")
			s.cmd(250, "RSET")
			s.cmd(250, "NOOP")
			s.cmd(250, "MAIL FROM:<a@example.test>")
			s.cmd(250, "RCPT TO:<b@example.test>")
			s.cmd(250, "RCPT TO:<C@example.test>")
			s.data(tt.body...)
			s.cmd(221, "QUIT")

			got := srv.WaitFor(t, "c@example.test", tt.wantSubj, time.Second)
			if got.Subject != tt.wantSubj {
				t.Errorf("Subject = %q, want %q", got.Subject, tt.wantSubj)
			}
			if strings.Join(got.To, ",") != "b@example.test,C@example.test" {
				t.Errorf("To = %v", got.To)
			}
			if got.Text != tt.wantText && strings.TrimSpace(got.Text) != tt.wantText {
				t.Errorf("Text = %q, want %q", got.Text, tt.wantText)
			}
			if strings.TrimSpace(got.HTML) != tt.wantHTML {
				t.Errorf("HTML = %q, want %q", got.HTML, tt.wantHTML)
			}
		})
	}
}

func TestMessage_Links(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want []string
	}{
		{name: "none", text: "hello", want: []string{}},
		{name: "trailing_punctuation", text: "open https://a.test/x?t=1&c=%2F. or (http://b.test/y)", want: []string{"https://a.test/x?t=1&c=%2F", "http://b.test/y"}},
		{name: "not_other_schemes", text: "ftp://a.test mailto:x@y.test", want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := smtptest.Message{Text: tt.text}.Links()
			if strings.Join(got, " ") != strings.Join(tt.want, " ") || got == nil {
				t.Errorf("Links = %q, want %q", got, tt.want)
			}
		})
	}
}

// Ensure the JSON mailbox a Node suite polls has the documented shape.
func TestServer_Handler(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t)
	for _, to := range []string{"a@example.test", "b@example.test"} {
		s := dial(t, srv)
		s.cmd(250, "HELO localhost")
		s.cmd(250, "MAIL FROM:<noreply@example.test>")
		s.cmd(250, "RCPT TO:<%s>", to)
		s.data("Subject: hi "+to, "", "link: https://x.test/"+to)
		s.cmd(221, "QUIT")
	}
	srv.WaitFor(t, "b@example.test", "hi", time.Second)
	api := httptest.NewServer(srv.Handler())
	t.Cleanup(api.Close)

	tests := []struct {
		name  string
		query string
		want  int
	}{
		{name: "filtered", query: "?to=A@example.test", want: 1},
		{name: "all", query: "", want: 2},
		{name: "nobody", query: "?to=z@example.test", want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := http.Get(api.URL + "/messages" + tt.query)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d, content type %q", res.StatusCode, res.Header.Get("Content-Type"))
			}
			var got []struct {
				To      []string `json:"to"`
				Subject string   `json:"subject"`
				Text    string   `json:"text"`
				HTML    *string  `json:"html"`
				Links   []string `json:"links"`
			}
			if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if got == nil || len(got) != tt.want {
				t.Fatalf("got %d messages (%v), want %d", len(got), got, tt.want)
			}
			if tt.name == "filtered" {
				m := got[0]
				if m.To[0] != "a@example.test" || m.Subject != "hi a@example.test" || m.HTML == nil ||
					len(m.Links) != 1 || m.Links[0] != "https://x.test/a@example.test" {
					t.Errorf("message = %+v", m)
				}
			}
		})
	}
}

// Ensure a hung server accepts a connection but says nothing until it
// recovers, then serves the session as usual.
func TestServer_Hang(t *testing.T) {
	t.Parallel()
	srv := smtptest.Start(t)
	srv.Hang()
	c, err := net.Dial("tcp", net.JoinHostPort(srv.Host(), strconv.Itoa(srv.Port())))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	buf := make([]byte, 64)
	if n, err := c.Read(buf); n != 0 || err == nil {
		t.Fatalf("hung server said %q (err %v), want silence", buf[:n], err)
	}
	srv.Recover()
	s := &session{t: t, c: textproto.NewConn(c)}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	s.expect(220)
}
