package smtptest

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Limits of the server; a test mail is far below them.
const (
	maxLineBytes    = 64 << 10
	maxMessageBytes = 10 << 20
	maxRecipients   = 100
	idleTimeout     = 30 * time.Second
)

// Server is an SMTP server on 127.0.0.1 that accepts every mail and keeps
// it. It speaks enough of RFC 5321 for real clients: EHLO/HELO, MAIL, RCPT,
// DATA (with dot-unstuffing), RSET, NOOP and QUIT, and it accepts any AUTH
// PLAIN. It offers no STARTTLS. It is safe for concurrent use.
type Server struct {
	ln   net.Listener
	wg   sync.WaitGroup
	quit chan struct{}
	once sync.Once

	mu    sync.Mutex
	msgs  []Message
	conns map[net.Conn]struct{}
	hung  chan struct{} // while non-nil, new sessions wait for it to close
}

// Start starts a server on a free loopback port. It is closed when the test
// and its subtests end.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartAt(t, "127.0.0.1:0")
}

// StartAt starts a server on addr, a loopback host and port: a server that
// comes back on the port another one listened on, as a mail server does
// after an outage. It is closed when the test and its subtests end.
func StartAt(t testing.TB, addr string) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("smtptest: listen: %v", err)
	}
	s := &Server{ln: ln, quit: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(s.Close)
	return s
}

// Host returns the address the server listens on, "127.0.0.1".
func (s *Server) Host() string { return s.ln.Addr().(*net.TCPAddr).IP.String() }

// Port returns the port the server listens on.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// Close stops the server and ends open sessions. It is idempotent.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.quit)
		_ = s.ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
}

// Hang makes the server accept connections but say nothing, not even its
// greeting, as a stuck server does, until Recover. Clients wait until their
// own timeout.
func (s *Server) Hang() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hung == nil {
		s.hung = make(chan struct{})
	}
}

// Recover ends Hang: the sessions waiting get their greeting and go on.
func (s *Server) Recover() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hung != nil {
		close(s.hung)
		s.hung = nil
	}
}

// Messages returns the mails received so far, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, len(s.msgs))
	for i, m := range s.msgs {
		out[i] = m.clone()
	}
	return out
}

// WaitFor polls until a mail to the address to (case-insensitive) whose
// subject contains subjectContains has arrived and returns the newest such
// mail. It fails the test when none arrives within timeout.
func (s *Server) WaitFor(t testing.TB, to, subjectContains string, timeout time.Duration) Message {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		msgs := s.Messages()
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].IsTo(to) && strings.Contains(msgs[i].Subject, subjectContains) {
				return msgs[i]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("smtptest: no mail to %q with subject containing %q within %v (%d mails received)",
				to, subjectContains, timeout, len(msgs))
			return Message{}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		select {
		case <-s.quit:
			s.mu.Unlock()
			_ = c.Close()
			return
		default:
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				_ = c.Close()
			}()
			s.session(c)
		}()
	}
}

// errTooLong is returned by readLine for a line over maxLineBytes.
var errTooLong = errors.New("line too long")

// session runs one SMTP conversation.
func (s *Server) session(c net.Conn) {
	r := bufio.NewReaderSize(c, 4096)
	w := bufio.NewWriter(c)
	reply := func(lines ...string) bool {
		for _, l := range lines {
			_, _ = w.WriteString(l + "\r\n")
		}
		return w.Flush() == nil
	}
	var (
		greeted bool
		from    string
		rcpts   []string
		inMail  bool
	)
	reset := func() { from, rcpts, inMail = "", nil, false }

	s.mu.Lock()
	hung := s.hung
	s.mu.Unlock()
	if hung != nil {
		select {
		case <-hung:
		case <-s.quit:
			return
		}
	}
	if !reply("220 smtptest ESMTP ready") {
		return
	}
	for {
		_ = c.SetReadDeadline(time.Now().Add(idleTimeout))
		line, err := readLine(r)
		if errors.Is(err, errTooLong) {
			if !reply("500 5.5.2 line too long") {
				return
			}
			continue
		}
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(strings.TrimRight(line, "\r\n"), " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			greeted = true
			reset()
			if !reply("250-smtptest greets "+arg, "250-8BITMIME", "250-SMTPUTF8",
				"250-SIZE "+strconv.Itoa(maxMessageBytes), "250-AUTH PLAIN", "250 ENHANCEDSTATUSCODES") {
				return
			}
		case "HELO":
			greeted = true
			reset()
			if !reply("250 smtptest") {
				return
			}
		case "AUTH":
			// Any credentials are accepted; with no initial response, take one line.
			if strings.EqualFold(strings.TrimSpace(arg), "PLAIN") {
				if !reply("334 ") {
					return
				}
				if _, err := readLine(r); err != nil {
					return
				}
			}
			if !reply("235 2.7.0 authenticated") {
				return
			}
		case "MAIL":
			addr, ok := pathArg(arg, "FROM:")
			switch {
			case !greeted:
				ok = reply("503 5.5.1 say EHLO first")
			case inMail:
				ok = reply("503 5.5.1 nested MAIL")
			case !ok:
				ok = reply("501 5.5.4 syntax: MAIL FROM:<address>")
			default:
				from, inMail = addr, true
				ok = reply("250 2.1.0 ok")
			}
			if !ok {
				return
			}
		case "RCPT":
			addr, ok := pathArg(arg, "TO:")
			switch {
			case !inMail:
				ok = reply("503 5.5.1 need MAIL first")
			case !ok || addr == "":
				ok = reply("501 5.5.4 syntax: RCPT TO:<address>")
			case len(rcpts) >= maxRecipients:
				ok = reply("452 4.5.3 too many recipients")
			default:
				rcpts = append(rcpts, addr)
				ok = reply("250 2.1.5 ok")
			}
			if !ok {
				return
			}
		case "DATA":
			if len(rcpts) == 0 {
				if !reply("503 5.5.1 need RCPT first") {
					return
				}
				continue
			}
			if !reply("354 end data with <CR><LF>.<CR><LF>") {
				return
			}
			raw, err := readData(r)
			if errors.Is(err, errTooLong) {
				reset()
				if !reply("552 5.3.4 message too big") {
					return
				}
				continue
			}
			if err != nil {
				return
			}
			s.store(from, rcpts, raw)
			reset()
			if !reply("250 2.0.0 ok: queued") {
				return
			}
		case "RSET":
			reset()
			if !reply("250 2.0.0 ok") {
				return
			}
		case "NOOP":
			if !reply("250 2.0.0 ok") {
				return
			}
		case "QUIT":
			reply("221 2.0.0 bye")
			return
		default:
			if !reply("502 5.5.2 command not implemented") {
				return
			}
		}
	}
}

// pathArg parses "FROM:<addr> PARAMS" (or "TO:…") and returns addr.
func pathArg(arg, prefix string) (string, bool) {
	if len(arg) < len(prefix) || !strings.EqualFold(arg[:len(prefix)], prefix) {
		return "", false
	}
	rest := strings.TrimSpace(arg[len(prefix):])
	if !strings.HasPrefix(rest, "<") {
		return "", false
	}
	end := strings.IndexByte(rest, '>')
	if end < 0 {
		return "", false
	}
	return rest[1:end], true
}

// readLine reads one line, including its line ending, of at most maxLineBytes.
func readLine(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(b)+len(chunk) > maxLineBytes {
			// Skip the rest of the line so the session can go on.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err != nil {
				return "", err
			}
			return "", errTooLong
		}
		b = append(b, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) && len(b) > 0 {
				return "", io.ErrUnexpectedEOF
			}
			return "", err
		}
		return string(b), nil
	}
}

// readData reads a DATA section up to the lone "." line and undoes dot
// stuffing (RFC 5321 §4.5.2). It keeps reading past maxMessageBytes, so the
// session stays in step, and then returns errTooLong.
func readData(r *bufio.Reader) (string, error) {
	var sb strings.Builder
	tooBig := false
	for {
		line, err := readLine(r)
		if errors.Is(err, errTooLong) {
			tooBig = true
			continue
		}
		if err != nil {
			return "", err
		}
		if line == ".\r\n" || line == ".\n" {
			break
		}
		line = strings.TrimPrefix(line, ".")
		if sb.Len()+len(line) > maxMessageBytes {
			tooBig = true
			continue
		}
		sb.WriteString(line)
	}
	if tooBig {
		return "", errTooLong
	}
	return sb.String(), nil
}

func (s *Server) store(from string, rcpts []string, raw string) {
	m := parse(raw)
	m.Raw = raw
	m.To = append([]string(nil), rcpts...)
	if m.From == "" {
		m.From = from
	}
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
}
