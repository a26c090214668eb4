package edge

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/domain"
)

// The edge refuses hostile strings before anything else reads them: a NUL
// byte or invalid UTF-8 anywhere in the path, the query, a JSON or form body
// or a credential-carrying header is a 400 naming the part. PostgreSQL
// refuses such text (SQLSTATE 22021) where SQLite stores it, so without this
// check the same request was a 500 on one store and a write on the other.
// Malformed percent-encoding, which Go's parsers drop without a word, and
// JSON nested deeper than any operation takes are refused the same way.

const (
	msgBadText   = "must not contain NUL bytes or invalid UTF-8"
	msgMalformed = "is malformed"
	msgTooDeep   = "is nested too deeply"
	// maxJSONDepth bounds the nesting of a JSON body; no operation takes
	// more than a few levels.
	maxJSONDepth = 64
	// maxNamedKey bounds a name repeated in a location (query.<name>).
	maxNamedKey = 64
)

// checkedHeaders carry inputs that reach the use cases or the stores. NUL
// never gets this far (net/http refuses control bytes in headers); invalid
// UTF-8 does. Cookie needs no check: net/http drops cookie values with
// bytes outside printable ASCII.
var checkedHeaders = []string{"Authorization", "X-Api-Key", "Origin", "User-Agent"}

// isCleanText reports whether s is valid UTF-8 without NUL.
func isCleanText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// InputCheck refuses requests carrying hostile strings, in the shape of the
// contract the path belongs to. A GET without a body costs a scan of its
// path, query and a few headers; bodies are read (within the body limit),
// scanned and put back only for JSON and form requests.
func (s *Kit) InputCheck() gin.HandlerFunc {
	return func(c *gin.Context) {
		fv, status := checkRequest(c)
		if fv == nil {
			c.Next()
			return
		}
		s.refuseInput(c, status, *fv)
	}
}

// checkRequest returns the first hostile part of the request and the status
// to answer it with, or nil.
func checkRequest(c *gin.Context) (*domain.FieldViolation, int) {
	r := c.Request
	if !isCleanText(r.URL.Path) {
		loc := "path"
		for _, p := range c.Params {
			if !isCleanText(p.Value) {
				loc = "path." + p.Key
				break
			}
		}
		return &domain.FieldViolation{Field: loc, Message: msgBadText}, http.StatusBadRequest
	}
	if fv := checkPairs(r.URL.RawQuery, "query"); fv != nil {
		return fv, http.StatusBadRequest
	}
	for _, h := range checkedHeaders {
		for _, v := range r.Header.Values(h) {
			if !isCleanText(v) || h == "Authorization" && !isCleanBasic(v) {
				return &domain.FieldViolation{Field: "header." + strings.ToLower(h), Message: msgBadText}, http.StatusBadRequest
			}
		}
	}
	if !hasBody(r) {
		return nil, 0
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	form := ct == "application/x-www-form-urlencoded"
	// Without a Content-Type Huma reads JSON, so that is scanned too.
	if !form && ct != "" && ct != "application/json" && !strings.HasSuffix(ct, "+json") {
		return nil, 0
	}
	raw, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &domain.FieldViolation{Field: "body", Message: "is too large"}, http.StatusRequestEntityTooLarge
		}
		return &domain.FieldViolation{Field: "body", Message: "could not be read"}, http.StatusBadRequest
	}
	if form {
		return checkPairs(string(raw), "body"), http.StatusBadRequest
	}
	return checkJSON(raw), http.StatusBadRequest
}

// hasBody reports whether r has a body its method may carry.
func hasBody(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
}

// isCleanBasic reports whether Basic credentials, once decoded (and
// percent-decoded, as RFC 6749 §2.3.1 has clients encode them), are clean.
// Any other scheme passes; the header itself was checked already.
func isCleanBasic(h string) bool {
	if len(h) < 6 || !strings.EqualFold(h[:6], "basic ") {
		return true
	}
	dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(h[6:]))
	if err != nil {
		return true // malformed: the token endpoint answers invalid_client
	}
	if !isCleanText(string(dec)) {
		return false
	}
	id, secret, _ := strings.Cut(string(dec), ":")
	for _, part := range []string{id, secret} {
		if u, err := url.QueryUnescape(part); err == nil && !isCleanText(u) {
			return false
		}
	}
	return true
}

// checkPairs scans a query string or form body, located under prefix. It
// refuses what url.ParseQuery would drop (bad percent-encoding, semicolons)
// as well as hostile names and values. A name is repeated in the location
// only when it is a plain identifier, so nothing submitted is echoed.
func checkPairs(raw, prefix string) *domain.FieldViolation {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key, kerr := url.QueryUnescape(rawKey)
		loc := prefix
		if kerr == nil && isPlainName(key) {
			loc = prefix + "." + key
		}
		if kerr != nil || strings.Contains(rawKey, ";") {
			return &domain.FieldViolation{Field: prefix, Message: msgMalformed}
		}
		if !isCleanText(key) {
			return &domain.FieldViolation{Field: prefix, Message: msgBadText}
		}
		value, verr := url.QueryUnescape(rawValue)
		if verr != nil || strings.Contains(rawValue, ";") {
			return &domain.FieldViolation{Field: loc, Message: msgMalformed}
		}
		if !isCleanText(value) {
			return &domain.FieldViolation{Field: loc, Message: msgBadText}
		}
	}
	return nil
}

// isPlainName reports whether name may be repeated in a location: a short
// identifier of letters, digits, '_', '-' and '.'.
func isPlainName(name string) bool {
	if name == "" || len(name) > maxNamedKey {
		return false
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.'
		if !ok {
			return false
		}
	}
	return true
}

// jsonFrame is one open object or array on the way to a token.
type jsonFrame struct {
	array   bool
	index   int    // the current element of an array
	key     string // the current member of an object ("" when not plain)
	wantKey bool
}

// checkJSON walks a JSON body token by token, without recursion, so that no
// nesting can exhaust the stack. Decoded strings (object keys and values)
// must be clean; the raw bytes of each token are checked as well, because
// the decoder quietly turns invalid UTF-8 into U+FFFD. A syntax error is
// left to the operation, which answers it as malformed JSON.
func checkJSON(raw []byte) *domain.FieldViolation {
	if !utf8.Valid(raw) || bytes.IndexByte(raw, 0) >= 0 {
		// Find the part below; report the whole body if the walk cannot.
		if fv := walkJSON(raw); fv != nil {
			return fv
		}
		return &domain.FieldViolation{Field: "body", Message: msgBadText}
	}
	return walkJSON(raw)
}

func walkJSON(raw []byte) *domain.FieldViolation {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var stack []jsonFrame
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil // io.EOF, or a syntax error the operation reports
		}
		end := dec.InputOffset()
		isKey := len(stack) > 0 && !stack[len(stack)-1].array && stack[len(stack)-1].wantKey
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if !isKey && len(stack) > 0 {
			// A value: it belongs to the current element or member.
			top := &stack[len(stack)-1]
			if top.array {
				top.index++
			} else {
				top.wantKey = true
			}
		}
		clean := utf8.Valid(raw[start:end]) && bytes.IndexByte(raw[start:end], 0) < 0
		if str, ok := tok.(string); ok && !isCleanText(str) {
			clean = false
		}
		if isKey {
			top := &stack[len(stack)-1]
			if !clean {
				return &domain.FieldViolation{Field: jsonLocation(stack[:len(stack)-1]), Message: msgBadText}
			}
			top.key, top.wantKey = "", false
			if str, _ := tok.(string); isPlainName(str) {
				top.key = str
			}
			continue
		}
		if !clean {
			return &domain.FieldViolation{Field: jsonLocation(stack), Message: msgBadText}
		}
		if d, ok := tok.(json.Delim); ok {
			if len(stack) == maxJSONDepth {
				return &domain.FieldViolation{Field: "body", Message: msgTooDeep}
			}
			stack = append(stack, jsonFrame{array: d == '[', index: -1, wantKey: d == '{'})
		}
	}
}

// jsonLocation names the member or element the frames lead to, as Huma
// does (body.members[2].role). It stops at a name it may not repeat.
func jsonLocation(stack []jsonFrame) string {
	var b strings.Builder
	b.WriteString("body")
	for _, f := range stack {
		if f.array {
			if f.index < 0 {
				break
			}
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
			continue
		}
		if f.key == "" {
			break
		}
		b.WriteString("." + f.key)
	}
	return b.String()
}

// refuseInput answers a hostile request: a 400 (or 413) naming the part, in
// the shape of the route's contract, logged at warn.
func (s *Kit) refuseInput(c *gin.Context, status int, fv domain.FieldViolation) {
	ctx := c.Request.Context()
	if status == http.StatusRequestEntityTooLarge {
		WriteGinError(c, RenderStatus(ctx, status, "", "The request body is too large.", nil))
		return
	}
	if PolicyFrom(ctx).Shape == ShapeOAuth {
		err := s.OAuthFailure(ctx, OAuthErr("invalid_request", "["+fv.Field+"] "+fv.Message), false, false)
		var oe *OAuthError
		if errors.As(err, &oe) {
			c.Header("Content-Type", "application/json")
			c.AbortWithStatusJSON(oe.status, oe)
			return
		}
	}
	de := domain.Invalid("request.invalid", "The request is malformed.", fv)
	WriteGinError(c, RenderError(ctx, LoggerFrom(ctx), de))
}
