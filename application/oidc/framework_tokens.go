package oidc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// FrameworkToken signs the Better Auth JWT plugin's token for a signed-in
// user: user is the user object exactly as the framework serialises it
// (get-session's "user"), to which iat, exp, sub, iss and aud are added. The
// edge owns that shape, so there is one serialiser of it.
func (k *SigningKeys) FrameworkToken(ctx context.Context, p *usecase.Principal, user any) (string, error) {
	c, err := k.frameworkClaims(p, user)
	if err != nil {
		return "", err
	}
	now := k.clock.Now()
	lk := k.snap.Load().signer(domain.AlgEdDSA, now)
	if lk == nil {
		return "", domain.Internal("signing keys", fmt.Errorf("no %s key signs", domain.AlgEdDSA))
	}
	return lk.signer.Sign("JWT", c.payload(now.Unix(), now.Add(k.settings.JWTLifetime).Unix()))
}

// SessionFrameworkToken is FrameworkToken for get-session, which clients
// call on every page: it hands out again the token it last signed for the
// same session while that token is as good as a new one. That is, while the
// session is unchanged (same updated_at), every claim but iat and exp would
// be byte for byte the same (the user object, sub, iss, aud, amr, acr), the
// key that signed it still signs, and at least two thirds of its lifetime
// are left. Whether the session is still valid, and its user not banned,
// is the caller's to check first, on every call: a reused token never
// outlives the check that let it out.
func (k *SigningKeys) SessionFrameworkToken(ctx context.Context, p *usecase.Principal, user any) (string, error) {
	if p == nil || p.Session == nil {
		return k.FrameworkToken(ctx, p, user)
	}
	c, err := k.frameworkClaims(p, user)
	if err != nil {
		return "", err
	}
	now := k.clock.Now()
	lk := k.snap.Load().signer(domain.AlgEdDSA, now)
	if lk == nil {
		return "", domain.Internal("signing keys", fmt.Errorf("no %s key signs", domain.AlgEdDSA))
	}
	id, updated := p.Session.ID(), p.Session.UpdatedAt()
	if e := k.frameworkTokens.get(id); e != nil && e.kid == lk.key.ID && e.sessionUpdatedAt.Equal(updated) &&
		e.claims.equal(c) && k.fresh(e.issuedAt, now) {
		return e.token, nil
	}
	iat := now.Unix()
	token, err := lk.signer.Sign("JWT", c.payload(iat, now.Add(k.settings.JWTLifetime).Unix()))
	if err != nil {
		return "", err
	}
	k.frameworkTokens.put(id, &frameworkTokenEntry{claims: c, sessionUpdatedAt: updated, kid: lk.key.ID, issuedAt: iat, token: token})
	return token, nil
}

// fresh reports whether a framework token issued at iat (Unix seconds) has
// at least two thirds of its lifetime left at now. A clock that went back
// behind iat makes it stale too.
func (k *SigningKeys) fresh(iat int64, now time.Time) bool {
	age := now.Sub(time.Unix(iat, 0))
	return age >= 0 && age*3 <= k.settings.JWTLifetime
}

// frameworkClaims are a framework token's claims but iat and exp, as JSON:
// the user object and the registered claims that follow them.
type frameworkClaims struct {
	object []byte // {…the user…}
	rest   []byte // {"sub":…,"iss":…,"aud":…,"amr":…,"acr":…}
}

func (c frameworkClaims) equal(o frameworkClaims) bool {
	return bytes.Equal(c.object, o.object) && bytes.Equal(c.rest, o.rest)
}

// payload is the token's JSON: the user's members, then iat, exp and the
// rest, as one object.
func (c frameworkClaims) payload(iat, exp int64) []byte {
	b := make([]byte, 0, len(c.object)+len(c.rest)+48)
	b = append(b, c.object[:len(c.object)-1]...)
	b = append(b, `,"iat":`...)
	b = strconv.AppendInt(b, iat, 10)
	b = append(b, `,"exp":`...)
	b = strconv.AppendInt(b, exp, 10)
	b = append(b, ',')
	return append(b, c.rest[1:]...)
}

func (k *SigningKeys) frameworkClaims(p *usecase.Principal, user any) (frameworkClaims, error) {
	if p == nil || p.User == nil {
		return frameworkClaims{}, usecase.ErrUnauthorized
	}
	object, err := json.Marshal(user)
	if err != nil || len(object) <= 2 || object[0] != '{' || object[len(object)-1] != '}' {
		return frameworkClaims{}, domain.Internal("signing keys: framework token", fmt.Errorf("the user is not a non-empty JSON object: %v", err))
	}
	std := struct {
		Subject  string `json:"sub"`
		Issuer   string `json:"iss"`
		Audience any    `json:"aud,omitempty"`
		// AMR and ACR say how the user signed in (RFC 8176 methods).
		AMR []string `json:"amr,omitempty"`
		ACR string   `json:"acr,omitempty"`
		// Act names the administrator acting through an impersonation
		// (RFC 8693 §4.1's actor claim), so that a consumer API can tell,
		// and refuse, a token that the user did not ask for themselves.
		Act *tokenActor `json:"act,omitempty"`
	}{Subject: string(p.User.ID()), Issuer: k.settings.JWTIssuer}
	if p.Session != nil {
		a := p.Session.Authentication()
		std.AMR, std.ACR = a.MethodNames(), a.ACR()
		if len(std.AMR) == 0 {
			std.ACR = ""
		}
		if by := p.Session.ImpersonatedBy(); by != "" {
			std.Act = &tokenActor{Subject: string(by)}
		}
	}
	switch len(k.settings.JWTAudience) {
	case 0:
	case 1:
		std.Audience = k.settings.JWTAudience[0]
	default:
		std.Audience = k.settings.JWTAudience
	}
	rest, err := json.Marshal(std)
	if err != nil {
		return frameworkClaims{}, domain.Internal("signing keys: framework token", err)
	}
	return frameworkClaims{object: object, rest: rest}, nil
}

// tokenActor is an RFC 8693 actor claim: who acts for the token's subject.
type tokenActor struct {
	Subject string `json:"sub"`
}

// frameworkTokenEntry is a signed framework token and what it was signed
// from. It is never modified once stored.
type frameworkTokenEntry struct {
	claims           frameworkClaims
	sessionUpdatedAt time.Time
	kid              domain.SigningKeyID
	issuedAt         int64
	token            string
}

// frameworkTokenCacheSize bounds the sessions whose last framework token is
// kept: about a kilobyte each.
const frameworkTokenCacheSize = 10_000

// frameworkTokenCache keeps the last framework token of recently seen
// sessions, at most frameworkTokenCacheSize of them, in two generations: a
// token found in the older one moves to the newer, and when the newer is
// full the older is dropped whole. Sessions in use stay; sessions gone quiet
// (or ended) fall out. Safe for concurrent use.
type frameworkTokenCache struct {
	mu       sync.Mutex
	cur, old map[domain.SessionID]*frameworkTokenEntry
}

func newFrameworkTokenCache() *frameworkTokenCache {
	return &frameworkTokenCache{cur: map[domain.SessionID]*frameworkTokenEntry{}}
}

func (c *frameworkTokenCache) get(id domain.SessionID) *frameworkTokenEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.cur[id]; e != nil {
		return e
	}
	e := c.old[id]
	if e != nil {
		c.putLocked(id, e)
	}
	return e
}

func (c *frameworkTokenCache) put(id domain.SessionID, e *frameworkTokenEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(id, e)
}

func (c *frameworkTokenCache) putLocked(id domain.SessionID, e *frameworkTokenEntry) {
	c.cur[id] = e
	if len(c.cur) >= frameworkTokenCacheSize/2 {
		c.old, c.cur = c.cur, make(map[domain.SessionID]*frameworkTokenEntry, frameworkTokenCacheSize/2)
	}
}

// len returns how many tokens are kept (tests).
func (c *frameworkTokenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.old)
}
