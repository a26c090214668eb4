package mailer

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"net/url"
	"strings"
	texttemplate "text/template"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/domain"
)

// DefaultProductName is the product named in mails when none is configured.
const DefaultProductName = "Gatehouse"

// maxNameRunes caps the user's name, and the organization's and inviter's
// names of an invitation, as shown in a mail. They are chosen by whoever signs
// up or creates the organization, who may not own the recipient's address, so
// they must not be able to carry a paragraph of phishing text into a mail we
// send.
const maxNameRunes = 64

//go:embed templates
var templateFS embed.FS

// kinds lists every kind Render knows, so templates are parsed (and a missing
// one fails) at start-up rather than on the first mail.
var kinds = []domain.MailKind{
	domain.MailVerifyEmail,
	domain.MailChangeEmail,
	domain.MailResetPassword,
	domain.MailDeleteUser,
	domain.MailAccountExists,
	domain.MailInvitation,
	domain.MailTwoFactorCode,
	domain.MailFactorsReset,
	domain.MailWebhookDisabled,
}

// mailTemplates holds the parsed templates of one kind.
type mailTemplates struct {
	text *texttemplate.Template // defines "subject", "body" and "layout"
	html *htmltemplate.Template // defines "action", "body" and "layout"
}

var parsed = mustParseTemplates()

func mustParseTemplates() map[domain.MailKind]mailTemplates {
	out := make(map[domain.MailKind]mailTemplates, len(kinds))
	for _, k := range kinds {
		text, err := texttemplate.New("").Option("missingkey=error").
			ParseFS(templateFS, "templates/layout.txt", "templates/"+string(k)+".txt")
		if err != nil {
			panic(fmt.Sprintf("mailer: parse text templates of %s: %v", k, err))
		}
		// html/template escapes by context: the name is HTML-escaped, the link
		// in href is filtered to safe URL schemes.
		html, err := htmltemplate.New("").Option("missingkey=error").
			ParseFS(templateFS, "templates/layout.html", "templates/"+string(k)+".html")
		if err != nil {
			panic(fmt.Sprintf("mailer: parse HTML templates of %s: %v", k, err))
		}
		out[k] = mailTemplates{text: text, html: html}
	}
	return out
}

// templateData is what the templates see.
type templateData struct {
	Product   string
	Name      string
	Link      string
	ExpiresIn string
	Subject   string
	// Organization and Inviter are set for domain.MailInvitation only.
	Organization string
	Inviter      string
	// Code is set for domain.MailTwoFactorCode only.
	Code string
	// WebhookID and WebhookURL are set for domain.MailWebhookDisabled only.
	WebhookID  string
	WebhookURL string
}

// Render returns the subject, plain-text body and HTML body of m, naming
// product (DefaultProductName when empty). Every kind but
// domain.MailAccountExists, domain.MailFactorsReset, domain.MailWebhookDisabled
// (a WebhookID and WebhookURL instead) and domain.MailTwoFactorCode (a Code
// instead) needs an absolute http(s) Link and a positive
// ExpiresIn; domain.MailInvitation also needs an Organization (its Inviter
// is optional). The error says which is missing. Names are cleaned of control
// characters and truncated, so none can break the Subject header.
func Render(m domain.Mail, product string) (subject, text, html string, err error) {
	t, ok := parsed[m.Kind]
	if !ok {
		return "", "", "", fmt.Errorf("mailer: unknown mail kind %q", m.Kind)
	}
	if product == "" {
		product = DefaultProductName
	}
	if err := checkProductName(product); err != nil {
		return "", "", "", err
	}
	data := templateData{Product: product, Name: cleanName(m.Name)}
	switch m.Kind {
	case domain.MailAccountExists, domain.MailFactorsReset:
	case domain.MailWebhookDisabled:
		// Both come from the service (an id it made, a URL it checked),
		// never from the recipient; the URL is not a link to follow.
		if m.WebhookID == "" || m.WebhookURL == "" {
			return "", "", "", errors.New("mailer: webhook-disabled mail needs a WebhookID and a WebhookURL")
		}
		data.WebhookID, data.WebhookURL = cleanName(m.WebhookID), m.WebhookURL
	case domain.MailTwoFactorCode:
		if !isDigits(m.Code) || m.ExpiresIn <= 0 {
			return "", "", "", errors.New("mailer: two-factor code mail needs a Code of digits and a positive ExpiresIn")
		}
		data.Code, data.ExpiresIn = m.Code, humanDuration(m.ExpiresIn)
	default:
		if err := checkLink(m.Link); err != nil {
			return "", "", "", err
		}
		if m.ExpiresIn <= 0 {
			return "", "", "", fmt.Errorf("mailer: %s mail needs a positive ExpiresIn", m.Kind)
		}
		data.Link = m.Link
		data.ExpiresIn = humanDuration(m.ExpiresIn)
	}
	if m.Kind == domain.MailInvitation {
		// Both names are chosen by users and go into the Subject header.
		data.Organization = cleanHeaderName(m.Organization)
		data.Inviter = cleanHeaderName(m.Inviter)
		if data.Organization == "" {
			return "", "", "", errors.New("mailer: invitation mail needs an Organization")
		}
	}

	var b bytes.Buffer
	if err := t.text.ExecuteTemplate(&b, "subject", data); err != nil {
		return "", "", "", fmt.Errorf("mailer: render subject of %s: %w", m.Kind, err)
	}
	subject = strings.TrimSpace(b.String())
	data.Subject = subject

	b.Reset()
	if err := t.text.ExecuteTemplate(&b, "layout", data); err != nil {
		return "", "", "", fmt.Errorf("mailer: render text of %s: %w", m.Kind, err)
	}
	text = b.String()

	b.Reset()
	if err := t.html.ExecuteTemplate(&b, "layout", data); err != nil {
		return "", "", "", fmt.Errorf("mailer: render HTML of %s: %w", m.Kind, err)
	}
	return subject, text, b.String(), nil
}

// checkProductName refuses control characters: the name goes into the
// Subject header, where a line break would start a new header.
func checkProductName(product string) error {
	if !utf8.ValidString(product) || strings.IndexFunc(product, unicode.IsControl) >= 0 {
		return errors.New("mailer: product name must be valid UTF-8 without control characters")
	}
	return nil
}

// checkLink accepts only absolute http(s) URLs without spaces or control
// characters, so a link is always clickable and never a script.
func checkLink(link string) error {
	if link == "" {
		return errors.New("mailer: the mail needs a link")
	}
	if strings.IndexFunc(link, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return errors.New("mailer: the link contains spaces or control characters")
	}
	u, err := url.Parse(link)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("mailer: the link must be an absolute http or https URL")
	}
	return nil
}

// cleanName drops control and formatting characters (bidi overrides could
// disguise the text around them), collapses white space and truncates.
func cleanName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, name)
	name = strings.Join(strings.Fields(name), " ")
	if utf8.RuneCountInString(name) > maxNameRunes {
		name = strings.TrimSpace(string([]rune(name)[:maxNameRunes])) + "…"
	}
	return name
}

// cleanHeaderName is cleanName for a name that goes into the Subject header.
// cleanName already removes the line breaks that could start a new header;
// this also breaks up "=?", which mail clients would decode as an RFC 2047
// encoded word (go-mail leaves ASCII as is), so a name cannot smuggle back
// the control or bidi characters cleanName removed.
func cleanHeaderName(name string) string {
	return strings.ReplaceAll(cleanName(name), "=?", "= ?")
}

// humanDuration says d in words: "15 minutes", "1 hour", "24 hours",
// "1 hour 30 minutes", "7 days". It rounds down to whole minutes (but says at
// least "1 minute"), so a link is never promised to last longer than it does.
func humanDuration(d time.Duration) string {
	minutes := max(int64(d/time.Minute), 1)
	const day = 24 * 60
	switch {
	case minutes >= 2*day && minutes%day == 0:
		return plural(minutes/day, "day")
	case minutes >= 60 && minutes%60 == 0:
		return plural(minutes/60, "hour")
	case minutes > 60:
		return plural(minutes/60, "hour") + " " + plural(minutes%60, "minute")
	default:
		return plural(minutes, "minute")
	}
}

func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// isDigits reports whether s is 1 to 10 ASCII digits (a one-time code).
func isDigits(s string) bool {
	if s == "" || len(s) > 10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
