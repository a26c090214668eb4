package mailer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.Mailer = (*SMTP)(nil)

// The TLS modes of Config.TLSMode.
const (
	TLSModeSTARTTLS = "starttls" // plain connection upgraded with STARTTLS, which is required
	TLSModeTLS      = "tls"      // implicit TLS from the first byte (usually port 465)
	TLSModeNone     = "none"     // no encryption: loopback only, unless AllowInsecure
)

// DefaultTimeout bounds each network step of one delivery when
// Config.Timeout is zero.
const DefaultTimeout = 15 * time.Second

// Config says how to reach the SMTP server.
type Config struct {
	// Host is the server's name or IP address.
	Host string
	// Port defaults to 587 for "starttls", 465 for "tls" and 25 for "none".
	Port int
	// TLSMode is "starttls" (the default), "tls" or "none".
	TLSMode string
	// AllowInsecure permits TLSMode "none" for a host that is not loopback.
	AllowInsecure bool
	// Username enables SMTP AUTH when set; the mechanism is discovered from
	// the server, and PLAIN and LOGIN are only used on encrypted connections.
	Username string
	// Password goes with Username. It never appears in errors.
	Password string
	// From is the sender, "noreply@example.com" or "Example <noreply@example.com>".
	// Without a name, the product name is shown.
	From string
	// ProductName is named in subjects and bodies (DefaultProductName when empty).
	ProductName string
	// Timeout bounds each network step of one delivery (DefaultTimeout when zero).
	Timeout time.Duration
}

// SMTP delivers each mail over its own SMTP connection. It is safe for
// concurrent use. Deliver through an Outbox so that requests do not wait for it.
type SMTP struct {
	cfg       Config
	from      *mail.Address
	msgDomain string // right-hand side of Message-IDs
}

// NewSMTP checks cfg and returns an SMTP mailer. It does not connect. The
// error is of kind domain.KindInvalid and says which setting is wrong.
func NewSMTP(cfg Config) (*SMTP, error) {
	invalid := func(msg string) error { return domain.Invalid("mail.config", "smtp: "+msg) }

	cfg.Host = strings.TrimSpace(cfg.Host)
	if cfg.Host == "" || strings.ContainsAny(cfg.Host, " \t\r\n/") {
		return nil, invalid("host must be a host name or IP address")
	}
	if cfg.TLSMode == "" {
		cfg.TLSMode = TLSModeSTARTTLS
	}
	switch cfg.TLSMode {
	case TLSModeSTARTTLS, TLSModeTLS:
	case TLSModeNone:
		// Credentials and reset links would cross the network in clear text.
		if !IsLoopback(cfg.Host) && !cfg.AllowInsecure {
			return nil, invalid(`TLS mode "none" is only allowed for a loopback host unless insecure mail is explicitly allowed`)
		}
	default:
		return nil, invalid(`TLS mode must be "starttls", "tls" or "none"`)
	}
	if cfg.Port == 0 {
		cfg.Port = map[string]int{TLSModeSTARTTLS: 587, TLSModeTLS: 465, TLSModeNone: 25}[cfg.TLSMode]
	}
	if cfg.Port < 1 || cfg.Port > 65535 {
		return nil, invalid("port must be between 1 and 65535")
	}
	if cfg.Password != "" && cfg.Username == "" {
		return nil, invalid("a password needs a username")
	}
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return nil, invalid(`from must be an address, optionally as "Name <address>"`)
	}
	if cfg.ProductName == "" {
		cfg.ProductName = DefaultProductName
	}
	if err := checkProductName(cfg.ProductName); err != nil {
		return nil, invalid("product name must not contain control characters")
	}
	if cfg.Timeout < 0 {
		return nil, invalid("timeout must not be negative")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	_, msgDomain, _ := strings.Cut(from.Address, "@")
	return &SMTP{cfg: cfg, from: from, msgDomain: msgDomain}, nil
}

// Send renders m and delivers it. It dials the server for every mail: mail
// is rare enough here that a pool is not worth its failure modes. ctx bounds
// the dial; Config.Timeout bounds every later step.
func (s *SMTP) Send(ctx context.Context, m domain.Mail) error {
	subject, text, html, err := Render(m, s.cfg.ProductName)
	if err != nil {
		return domain.Internal("mailer: render", err)
	}
	msg, err := s.message(m.To, subject, text, html)
	if err != nil {
		return domain.Internal("mailer: build message", s.redact(err, m.To))
	}
	client, err := gomail.NewClient(s.cfg.Host, s.clientOptions()...)
	if err != nil {
		return s.unavailable(err, m.To)
	}
	err = client.DialAndSendWithContext(ctx, msg)
	// A failure after the server took the message (at RSET or QUIT) must not
	// make a queue send it again.
	if err != nil && !msg.IsDelivered() {
		return s.unavailable(err, m.To)
	}
	return nil
}

func (s *SMTP) message(to domain.Email, subject, text, html string) (*gomail.Msg, error) {
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	name := s.from.Name
	if name == "" {
		name = s.cfg.ProductName
	}
	if err := msg.FromFormat(name, s.from.Address); err != nil {
		return nil, err
	}
	if err := msg.To(string(to)); err != nil {
		return nil, err
	}
	msg.Subject(subject)
	msg.SetDate()
	msg.SetMessageIDWithValue(randomID() + "@" + s.msgDomain)
	// RFC 3834: tells out-of-office responders not to answer.
	msg.SetGenHeader(gomail.Header("Auto-Submitted"), "auto-generated")
	msg.SetBodyString(gomail.TypeTextPlain, text)
	msg.AddAlternativeString(gomail.TypeTextHTML, html)
	return msg, nil
}

func (s *SMTP) clientOptions() []gomail.Option {
	opts := []gomail.Option{gomail.WithTimeout(s.cfg.Timeout)}
	switch s.cfg.TLSMode {
	case TLSModeTLS:
		opts = append(opts, gomail.WithSSL())
	case TLSModeNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	// Set after WithSSL, which would otherwise be free to pick its own port.
	opts = append(opts, gomail.WithPort(s.cfg.Port))
	if s.cfg.Username != "" {
		// Auto-discovery picks the strongest mechanism the server offers and
		// refuses PLAIN and LOGIN on an unencrypted connection.
		opts = append(opts,
			gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(s.cfg.Username),
			gomail.WithPassword(s.cfg.Password),
		)
	}
	return opts
}

func (s *SMTP) unavailable(err error, to domain.Email) error {
	return &domain.Error{
		Kind:    domain.KindUnavailable,
		Code:    "mail.unavailable",
		Message: "the mail could not be sent; try again later",
		Err:     fmt.Errorf("mailer: smtp %s: %w", net.JoinHostPort(s.cfg.Host, fmt.Sprint(s.cfg.Port)), s.redact(err, to)),
	}
}

func (s *SMTP) redact(err error, to domain.Email) error {
	return &redactedError{err: err, secrets: []string{s.cfg.Password}, recipient: string(to), replacement: maskAddress(to)}
}

// isPermanent reports whether err is the server's final refusal (a 5xx
// reply), which retrying will not change.
func isPermanent(err error) bool {
	var se *gomail.SendError
	if errors.As(err, &se) {
		code := se.ErrorCode()
		return !se.IsTemp() && code >= 500 && code < 600
	}
	return false
}

// IsLoopback reports whether host is "localhost" or a loopback IP address.
// Names are not resolved: what counts is what the operator wrote.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
