package webhookclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

var _ ports.WebhookPoster = (*Poster)(nil)

// Config is how the poster connects.
type Config struct {
	// AllowPrivate lets it reach every address: for tests and internal
	// networks only.
	AllowPrivate bool
	// Timeout bounds one request, from dialling to the end of the read
	// response (the caller's context may end it sooner).
	Timeout time.Duration
}

// Poster is the WebhookPoster on net/http.
type Poster struct {
	client *http.Client
}

// errNotPublic refuses an address that is not public.
var errNotPublic = errors.New("the host resolves to a private, loopback, link-local or reserved address")

// New returns a poster. Without AllowPrivate, its dialer refuses every
// address domain.IsPublicAddress refuses, after DNS resolution, for each
// address tried.
func New(cfg Config) *Poster {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !cfg.AllowPrivate {
		dialer.Control = refusePrivate
	}
	transport := &http.Transport{
		Proxy:                 nil, // a proxy would connect on our behalf, past the check
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: cfg.Timeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
	return &Poster{client: &http.Client{
		Transport: transport,
		Timeout:   cfg.Timeout,
		// A redirect could lead anywhere; the endpoint's own answer counts.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// refusePrivate is the dialer's check of the address it is about to
// connect to, after resolution.
func refusePrivate(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	addr, err := netip.ParseAddr(host)
	if err != nil || !domain.IsPublicAddress(addr) {
		return fmt.Errorf("%w (%s)", errNotPublic, host)
	}
	return nil
}

// drainLimit is how much more of a response is read, past the snippet, so
// the connection can be reused.
const drainLimit = 64 << 10

// Post implements ports.WebhookPoster.
func (p *Poster) Post(ctx context.Context, target string, headers [][2]string, body []byte) (ports.WebhookResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return ports.WebhookResponse{}, errors.New("the URL cannot be requested")
	}
	for _, h := range headers {
		req.Header.Set(h[0], h[1])
	}
	start := time.Now()
	res, err := p.client.Do(req)
	if err != nil {
		return ports.WebhookResponse{Latency: time.Since(start)}, describe(err)
	}
	defer res.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(res.Body, domain.MaxWebhookResponseSnippet))
	latency := time.Since(start)
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, drainLimit))
	return ports.WebhookResponse{StatusCode: res.StatusCode, Body: snippet, Latency: latency}, nil
}

// describe says why a request got no response, without the URL (the
// caller knows it) and without anything the request carried.
func describe(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	switch {
	case errors.Is(err, errNotPublic):
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			return fmt.Errorf("refused: %s", oe.Err.Error())
		}
		return fmt.Errorf("refused: %w", errNotPublic)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return errors.New("timeout: no response in time")
	}
	return err
}
