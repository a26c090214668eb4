package dnstest

import (
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TTL is the time to live of every record served: short, so a resolver
// caching in front of the server would still see changes quickly.
const TTL = 1

// maxChain bounds how many CNAMEs an answer follows, against loops.
const maxChain = 8

// Server is a DNS server on 127.0.0.1, on the same port over UDP and TCP. It
// is safe for concurrent use: records may change while it answers.
type Server struct {
	udp, tcp *dns.Server
	addr     string

	mu       sync.Mutex
	txt      map[string][]string // fqdn → TXT values
	cname    map[string]string   // fqdn → target fqdn
	a        map[string][]netip.Addr
	servfail map[string]bool
	drop     map[string]bool
	queries  map[query]int
	truncate bool
	delay    time.Duration
}

type query struct {
	name  string
	qtype uint16
}

// Start starts a server on a free loopback port. It is closed when the test
// and its subtests end.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{txt: map[string][]string{}, cname: map[string]string{}, a: map[string][]netip.Addr{},
		servfail: map[string]bool{}, drop: map[string]bool{}, queries: map[query]int{}}
	pc, ln := listen(t)
	s.addr = pc.LocalAddr().String()
	handler := dns.HandlerFunc(s.serve)
	s.udp = &dns.Server{PacketConn: pc, Handler: handler}
	s.tcp = &dns.Server{Listener: ln, Handler: handler}
	for _, srv := range []*dns.Server{s.udp, s.tcp} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		go func() { _ = srv.ActivateAndServe() }()
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatal("dnstest: the server did not start")
		}
	}
	t.Cleanup(s.Close)
	return s
}

// listen binds UDP on a free loopback port and TCP on the same port,
// retrying when another process holds that TCP port.
func listen(t testing.TB) (net.PacketConn, net.Listener) {
	t.Helper()
	var lastErr error
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("dnstest: listen udp: %v", err)
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, ln
		}
		lastErr = err
		_ = pc.Close()
	}
	t.Fatalf("dnstest: listen tcp: %v", lastErr)
	return nil, nil
}

// Addr returns the address to query, "127.0.0.1:<port>", for UDP and TCP.
func (s *Server) Addr() string { return s.addr }

// Close stops the server. It is idempotent.
func (s *Server) Close() {
	_ = s.udp.Shutdown()
	_ = s.tcp.Shutdown()
}

// fqdn returns name lower-cased with exactly one trailing dot.
func fqdn(name string) string { return dns.Fqdn(strings.ToLower(strings.TrimSuffix(name, "."))) }

// SetTXT replaces the TXT records at name with one record per value. A
// value longer than 255 bytes is split into several strings of one record,
// which clients join.
func (s *Server) SetTXT(name string, values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.txt[fqdn(name)] = append([]string(nil), values...)
}

// RemoveTXT removes the TXT records at name.
func (s *Server) RemoveTXT(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.txt, fqdn(name))
}

// SetCNAME makes name an alias of target. Like a real zone, a name with a
// CNAME has no other data: the answers for it follow the alias.
func (s *Server) SetCNAME(name, target string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cname[fqdn(name)] = fqdn(target)
}

// RemoveCNAME removes the CNAME at name.
func (s *Server) RemoveCNAME(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cname, fqdn(name))
}

// SetA replaces the address records (A and AAAA) at name.
func (s *Server) SetA(name string, addrs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var parsed []netip.Addr
	for _, a := range addrs {
		parsed = append(parsed, netip.MustParseAddr(a))
	}
	s.a[fqdn(name)] = parsed
}

// ServFail makes every query for name answer SERVFAIL (on) or be answered
// normally again (off).
func (s *Server) ServFail(name string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.servfail[fqdn(name)] = on
}

// Drop makes every query for name go unanswered (on), so clients time out,
// or be answered normally again (off).
func (s *Server) Drop(name string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop[fqdn(name)] = on
}

// TruncateUDP makes every answer over UDP empty and truncated (on), so
// clients must ask again over TCP, or complete again (off).
func (s *Server) TruncateUDP(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.truncate = on
}

// Delay makes every answer wait d (0: answer at once), as a slow zone
// would; queries are counted when they arrive. Each query waits on its
// own, so slow answers do not hold up others.
func (s *Server) Delay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Queries returns how many queries for name of type qtype ("TXT", "CNAME",
// "A", "AAAA"; "" for any type) the server received, over either transport.
func (s *Server) Queries(name, qtype string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for q, c := range s.queries {
		if q.name == fqdn(name) && (qtype == "" || dns.TypeToString[q.qtype] == qtype) {
			n += c
		}
	}
	return n
}

// serve answers one query.
func (s *Server) serve(w dns.ResponseWriter, req *dns.Msg) {
	if len(req.Question) != 1 || req.Opcode != dns.OpcodeQuery {
		_ = w.WriteMsg(new(dns.Msg).SetRcode(req, dns.RcodeFormatError))
		return
	}
	q := req.Question[0]
	name := fqdn(q.Name)
	s.mu.Lock()
	s.queries[query{name, q.Qtype}]++
	drop, fail, truncate, delay := s.drop[name], s.servfail[name], s.truncate, s.delay
	var m *dns.Msg
	if !drop && !fail {
		m = s.answer(req, name, q.Qtype)
	}
	s.mu.Unlock()
	time.Sleep(delay)
	switch {
	case drop:
		return
	case fail:
		m = new(dns.Msg).SetRcode(req, dns.RcodeServerFailure)
		m.RecursionAvailable = true
	}
	_, isTCP := w.RemoteAddr().(*net.TCPAddr)
	size := dns.MinMsgSize
	if isTCP {
		size = dns.MaxMsgSize
	} else if opt := req.IsEdns0(); opt != nil {
		size = int(opt.UDPSize())
	}
	if opt := req.IsEdns0(); opt != nil {
		m.SetEdns0(opt.UDPSize(), false)
	}
	m.Truncate(size)
	if truncate && !isTCP {
		m.Answer, m.Ns, m.Truncated = nil, nil, true
	}
	_ = w.WriteMsg(m)
}

// answer builds the answer for name and qtype from the records, following
// CNAMEs (unless the CNAME itself is asked for) as a recursive resolver
// would: the chain first, then the data at its end. The rcode is that of
// the last name of the chain (RFC 6604). The caller holds s.mu.
func (s *Server) answer(req *dns.Msg, name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg).SetReply(req)
	m.Authoritative, m.RecursionAvailable = true, true
	owner := req.Question[0].Name // answers repeat the question's spelling
	for range maxChain {
		target, isAlias := s.cname[name]
		if isAlias && qtype != dns.TypeCNAME {
			m.Answer = append(m.Answer, &dns.CNAME{Hdr: header(owner, dns.TypeCNAME), Target: target})
			name, owner = target, target
			continue
		}
		switch {
		case qtype == dns.TypeCNAME && isAlias:
			m.Answer = append(m.Answer, &dns.CNAME{Hdr: header(owner, dns.TypeCNAME), Target: target})
		case qtype == dns.TypeTXT:
			for _, v := range s.txt[name] {
				m.Answer = append(m.Answer, &dns.TXT{Hdr: header(owner, dns.TypeTXT), Txt: split(v)})
			}
		case qtype == dns.TypeA || qtype == dns.TypeAAAA:
			for _, a := range s.a[name] {
				switch {
				case qtype == dns.TypeA && a.Is4():
					m.Answer = append(m.Answer, &dns.A{Hdr: header(owner, dns.TypeA), A: a.AsSlice()})
				case qtype == dns.TypeAAAA && a.Is6():
					m.Answer = append(m.Answer, &dns.AAAA{Hdr: header(owner, dns.TypeAAAA), AAAA: a.AsSlice()})
				}
			}
		}
		if !s.exists(name) {
			m.Rcode = dns.RcodeNameError
		}
		if len(m.Answer) == 0 || m.Answer[len(m.Answer)-1].Header().Rrtype != qtype {
			m.Ns = []dns.RR{soa()} // a negative answer (NXDOMAIN or NODATA)
		}
		return m
	}
	m.Rcode = dns.RcodeServerFailure // a CNAME loop or an overlong chain
	return m
}

// exists reports whether name has any record, or is an empty non-terminal
// (a name above one that has). The caller holds s.mu.
func (s *Server) exists(name string) bool {
	return holds(s.txt, name) || holds(s.cname, name) || holds(s.a, name)
}

// holds reports whether m has name or a name below it.
func holds[V any](m map[string]V, name string) bool {
	for n := range m {
		if n == name || strings.HasSuffix(n, "."+name) {
			return true
		}
	}
	return false
}

func header(name string, rrtype uint16) dns.RR_Header {
	return dns.RR_Header{Name: name, Rrtype: rrtype, Class: dns.ClassINET, Ttl: TTL}
}

// soa is the zone's SOA, sent with negative answers.
func soa() dns.RR {
	return &dns.SOA{Hdr: header(".", dns.TypeSOA), Ns: "ns.dnstest.invalid.", Mbox: "hostmaster.dnstest.invalid.",
		Serial: 1, Refresh: 3600, Retry: 600, Expire: 86400, Minttl: TTL}
}

// split cuts a TXT value into strings of at most 255 bytes.
func split(v string) []string {
	if v == "" {
		return []string{""}
	}
	var out []string
	for len(v) > 255 {
		out = append(out, v[:255])
		v = v[255:]
	}
	return append(out, v)
}
