package federation

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// Bounds of every upstream call.
const (
	// callTimeout bounds one upstream request, body included.
	callTimeout = 10 * time.Second
	// maxResponseBytes bounds a response body; a larger one is refused, not
	// truncated.
	maxResponseBytes = 1 << 20
	userAgent        = "gatehouse"
)

// errTooLarge is the cause of a refused oversized response.
var errTooLarge = fmt.Errorf("response larger than %d bytes", maxResponseBytes)

// fail returns the upstream error e with cause wrapped, for the log. A cause
// that already is an upstream error is returned as it is, so a step deep
// down decides which step failed.
func fail(e *domain.Error, cause error) error {
	var de *domain.Error
	if errors.As(cause, &de) && isUpstream(de) {
		return cause
	}
	return &domain.Error{Kind: e.Kind, Code: e.Code, Message: e.Message, Err: cause}
}

// isUpstream reports whether e is one of the domain.ErrUpstream* errors.
func isUpstream(e *domain.Error) bool {
	for _, u := range []*domain.Error{domain.ErrUpstreamDiscovery, domain.ErrUpstreamCode,
		domain.ErrUpstreamIDToken, domain.ErrUpstreamUserInfo, domain.ErrUpstreamRefresh} {
		if e.Kind == u.Kind && e.Code == u.Code {
			return true
		}
	}
	return false
}

// response is an upstream answer, its body read in full.
type response struct {
	status int
	header http.Header
	body   []byte
}

// ok reports whether the status is 2xx.
func (r *response) ok() bool { return r.status >= 200 && r.status < 300 }

// mediaType returns the response's media type, lower-cased, without
// parameters.
func (r *response) mediaType() string {
	t, _, err := mime.ParseMediaType(r.header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return t
}

// send makes one upstream request under callTimeout and reads at most
// maxResponseBytes of its answer. A provider that cannot be reached (no
// answer, a timeout, a 5xx) is domain.ErrUpstreamDiscovery, whichever the
// step: the provider is unavailable, it did not refuse anything. An
// oversized body is refused, as the refused error of the step. Redirects
// are not followed (the client refuses them): the 3xx comes back to the
// caller as a status that is not 2xx. what names the step for the log,
// never the URL's query (a code could be in it).
func (c *Client) send(ctx context.Context, req *http.Request, refused *domain.Error, what string) (*response, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req = req.WithContext(ctx)
	req.Header.Set("User-Agent", userAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fail(domain.ErrUpstreamDiscovery, fmt.Errorf("%s: %w", what, redactURLError(err)))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fail(domain.ErrUpstreamDiscovery, fmt.Errorf("%s: reading the answer: %w", what, redactURLError(err)))
	}
	if len(body) > maxResponseBytes {
		return nil, fail(refused, fmt.Errorf("%s: %w", what, errTooLarge))
	}
	if resp.StatusCode >= 500 {
		return nil, fail(domain.ErrUpstreamDiscovery, fmt.Errorf("%s: status %d", what, resp.StatusCode))
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// redactURLError drops the URL from a *url.Error (its query could hold a
// code or a token), keeping the operation and the cause.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}

// get builds a GET of u accepting accept, with token as a bearer when not
// empty.
func get(u, accept, token string) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, errors.New("invalid URL")
	}
	req.Header.Set("Accept", accept)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req, nil
}

// postForm builds a form POST to u.
func postForm(u string, form url.Values) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, errors.New("invalid URL")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// basicAuth is the client_secret_basic header value: RFC 6749 §2.3.1 has
// the id and secret form-encoded before they are joined and base64-encoded.
func basicAuth(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

// checkEndpoint refuses an upstream URL that is not absolute https (http
// only on a loopback host), has user information or a fragment, as the
// domain refuses a configured one: a discovery document may not send the
// client's secrets or tokens anywhere a provider's registration could not.
func checkEndpoint(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" || strings.Contains(s, "#") {
		return errors.New("not an absolute URL without user information or fragment")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		h := u.Hostname()
		if ip := net.ParseIP(h); (ip != nil && ip.IsLoopback()) || strings.EqualFold(h, "localhost") {
			return nil
		}
	}
	return errors.New("not https (http only on a loopback host)")
}
