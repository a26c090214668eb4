package smtptest

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"regexp"
	"strings"
)

// Message is one received mail.
type Message struct {
	// From is the decoded From header (the envelope sender when there is none).
	From string
	// To lists the envelope recipients (RCPT TO), as the client sent them.
	To []string
	// Subject is the decoded Subject header.
	Subject string
	// Text and HTML are the decoded text/plain and text/html parts (the first
	// of each), with transfer encodings undone.
	Text string
	HTML string
	// Raw is the message as received, after dot-unstuffing.
	Raw string
}

// linkPattern finds http(s) URLs in plain text.
var linkPattern = regexp.MustCompile(`https?://[^\s<>"']+`)

// Links returns the http(s) URLs in the text part, in order.
func (m Message) Links() []string {
	found := linkPattern.FindAllString(m.Text, -1)
	links := make([]string, 0, len(found))
	for _, l := range found {
		// Sentence punctuation after a URL is not part of it.
		links = append(links, strings.TrimRight(l, ".,;:!?)]}"))
	}
	return links
}

// IsTo reports whether addr (compared case-insensitively) is a recipient.
func (m Message) IsTo(addr string) bool {
	for _, to := range m.To {
		if strings.EqualFold(to, strings.TrimSpace(addr)) {
			return true
		}
	}
	return false
}

func (m Message) clone() Message {
	m.To = append([]string(nil), m.To...)
	return m
}

// parse reads the headers and the text and HTML parts of raw. A malformed
// message keeps whatever could be read; Raw always has the rest.
func parse(raw string) Message {
	var m Message
	msg, err := mail.ReadMessage(strings.NewReader(raw))
	if err != nil {
		return m
	}
	dec := new(mime.WordDecoder)
	m.Subject = decodeHeader(dec, msg.Header.Get("Subject"))
	m.From = decodeHeader(dec, msg.Header.Get("From"))
	walk(&m, msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body, 0)
	return m
}

func decodeHeader(dec *mime.WordDecoder, v string) string {
	if d, err := dec.DecodeHeader(v); err == nil {
		return d
	}
	return v
}

// walk fills m.Text and m.HTML from one MIME entity, descending into
// multipart entities (alternative inside mixed, and so on).
func walk(m *Message, contentType, encoding string, body io.Reader, depth int) {
	if contentType == "" {
		contentType = "text/plain"
	}
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return
	}
	if strings.HasPrefix(mediaType, "multipart/") {
		if depth > 8 || params["boundary"] == "" {
			return
		}
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err != nil {
				return
			}
			walk(m, p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p, depth+1)
		}
	}
	if mediaType != "text/plain" && mediaType != "text/html" {
		return
	}
	b, err := io.ReadAll(decode(encoding, body))
	if err != nil {
		return
	}
	switch {
	case mediaType == "text/plain" && m.Text == "":
		m.Text = string(b)
	case mediaType == "text/html" && m.HTML == "":
		m.HTML = string(b)
	}
}

// decode undoes a Content-Transfer-Encoding. go-mail writes quoted-printable
// by default and base64 when asked to.
func decode(encoding string, r io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "quoted-printable":
		return quotedprintable.NewReader(r)
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, r) // skips line breaks
	default:
		return r
	}
}

// jsonMessage is one mail in the JSON mailbox.
type jsonMessage struct {
	To      []string `json:"to"`
	Subject string   `json:"subject"`
	Text    string   `json:"text"`
	HTML    string   `json:"html"`
	Links   []string `json:"links"`
}

// Handler serves the mailbox as JSON for test suites written in other
// languages: GET /messages?to=<addr> answers
// [{"to":[…],"subject":"…","text":"…","html":"…","links":[…]}], oldest
// first, filtered to mails for addr when given.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /messages", func(w http.ResponseWriter, r *http.Request) {
		to := r.URL.Query().Get("to")
		out := []jsonMessage{}
		for _, m := range s.Messages() {
			if to != "" && !m.IsTo(to) {
				continue
			}
			out = append(out, jsonMessage{To: m.To, Subject: m.Subject, Text: m.Text, HTML: m.HTML, Links: m.Links()})
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(out)
	})
	return mux
}
