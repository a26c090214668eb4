package edge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"io"
	"net/url"
	"strings"
	"sync"
)

// CookieSigner signs and verifies cookie values exactly as Better Auth does
// (better-auth-wire §2.2), so a deployment that sets the same secret and
// cookie prefix moves over with its users still signed in:
//
//	value = encodeURIComponent(token + "." + base64std(HMAC-SHA256(secret, token)))
//
// The first secret signs; every secret verifies, so secrets can be rotated
// without signing anyone out.
type CookieSigner struct {
	secrets []*macPool
}

// macPool hands out HMAC-SHA256 states keyed with one secret. A reset
// state starts from the hashed key pads, so a signature costs two SHA-256
// blocks instead of the five of keying a new HMAC each time; every request
// with a session cookie verifies one.
type macPool struct {
	pool sync.Pool
}

func newMACPool(secret []byte) *macPool {
	p := &macPool{}
	p.pool.New = func() any { return hmac.New(sha256.New, secret) }
	return p
}

// sum appends the HMAC of token to dst.
func (p *macPool) sum(dst []byte, token string) []byte {
	m := p.pool.Get().(hash.Hash)
	m.Reset()
	_, _ = io.WriteString(m, token)
	dst = m.Sum(dst)
	p.pool.Put(m)
	return dst
}

func newCookieSigner(secrets []string) *CookieSigner {
	if len(secrets) == 0 {
		panic("httpapi: no signing secret")
	}
	s := &CookieSigner{}
	for _, secret := range secrets {
		s.secrets = append(s.secrets, newMACPool([]byte(secret)))
	}
	return s
}

// signatureLen is the length of a standard-base64 SHA-256 HMAC with padding.
const signatureLen = 44

func (s *CookieSigner) signature(token string) string {
	var buf [sha256.Size]byte
	return base64.StdEncoding.EncodeToString(s.secrets[0].sum(buf[:0], token))
}

// Sign returns the cookie value for token, URL-encoded as encodeURIComponent
// would encode it.
func (s *CookieSigner) Sign(token string) string {
	return encodeURIComponent(token + "." + s.signature(token))
}

// Verify returns the token inside a cookie value (URL-encoded or not) when
// its signature matches one of the secrets. Anything else is treated as no
// cookie at all.
func (s *CookieSigner) Verify(value string) (string, bool) {
	if strings.Contains(value, "%") {
		decoded, err := url.PathUnescape(value)
		if err != nil {
			return "", false
		}
		value = decoded
	}
	i := strings.LastIndexByte(value, '.')
	if i <= 0 {
		return "", false
	}
	token, sig := value[:i], value[i+1:]
	if len(sig) != signatureLen || sig[signatureLen-1] != '=' {
		return "", false
	}
	var got, want [sha256.Size + 1]byte // DecodedLen(44) is 33
	n, err := base64.StdEncoding.Decode(got[:], []byte(sig))
	if err != nil {
		return "", false
	}
	ok := false
	for i := range s.secrets {
		// hmac.Equal is constant-time; every secret is tried so timing does
		// not reveal which one matched.
		if hmac.Equal(got[:n], s.secrets[i].sum(want[:0], token)) {
			ok = true
		}
	}
	return token, ok
}

// encodeURIComponent escapes like JavaScript's function of that name: all but
// A–Z a–z 0–9 - _ . ! ~ * ' ( ).
func encodeURIComponent(s string) string {
	var b strings.Builder
	const hexDigits = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// SignRaw returns token.signature without URL-encoding, the form Better
// Auth's bearer plugin puts in the set-auth-token header.
func (s *CookieSigner) SignRaw(token string) string {
	return token + "." + s.signature(token)
}
