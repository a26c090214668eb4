package harness

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
)

// FaultProxy sits between Gatehouse and a server it reaches over TCP
// (PostgreSQL, Redis) on loopback. Blackhole
// makes the database unreachable in the worst way: connections stay open but
// nothing comes back, so anything that queries hangs until its deadline.
// CutOnTraffic drops each connection as soon as anything is sent on it, so a
// query dies mid-flight, after it was sent and before its answer.
type FaultProxy struct {
	t        testing.TB
	ln       net.Listener
	target   string
	url      *url.URL
	mu       sync.Mutex
	blackout bool
	cut      bool
	conns    []net.Conn
}

// NewFaultProxy starts a proxy to the server of rawURL, a database or Redis
// URL.
func NewFaultProxy[U ~string](t testing.TB, rawURL U) *FaultProxy {
	t.Helper()
	u, err := url.Parse(string(rawURL))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &FaultProxy{t: t, ln: ln, target: u.Host, url: u}
	t.Cleanup(func() { ln.Close(); p.closeAll() })
	go p.serve()
	return p
}

// URL is the URL given to NewFaultProxy, through the proxy.
func (p *FaultProxy) URL() string {
	u := *p.url
	u.Host = p.ln.Addr().String()
	return u.String()
}

func (p *FaultProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns = append(p.conns, c)
		dark := p.blackout
		p.mu.Unlock()
		if dark {
			go io.Copy(io.Discard, c) // accept and swallow: the client waits forever
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, up)
		p.mu.Unlock()
		go p.pipe(up, c)
		go p.pipe(c, up)
	}
}

// pipe copies while the proxy is up and swallows bytes while it is dark.
func (p *FaultProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			dark, cut := p.blackout, p.cut
			p.mu.Unlock()
			if cut {
				src.Close()
				dst.Close()
				return
			}
			if !dark {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

// Blackhole stops all traffic, on open and new connections alike.
func (p *FaultProxy) Blackhole() {
	p.mu.Lock()
	p.blackout = true
	p.mu.Unlock()
}

// CutOnTraffic closes every connection, open or new, on its next bytes.
func (p *FaultProxy) CutOnTraffic() {
	p.mu.Lock()
	p.cut = true
	p.mu.Unlock()
}

// Restore closes the poisoned connections and lets new ones through.
func (p *FaultProxy) Restore() {
	p.closeAll()
	p.mu.Lock()
	p.blackout, p.cut = false, false
	p.mu.Unlock()
}

func (p *FaultProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
