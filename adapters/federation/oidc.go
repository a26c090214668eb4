package federation

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// maxClockSkew is how far the provider's clock may be from ours: an ID
// token expired less than this long ago, or issued less than this far in
// the future, is accepted.
const maxClockSkew = 60 * time.Second

// verifyIDToken verifies raw as an ID token of p (go-oidc checks the
// algorithm against d.algs, the signature against p's key set, iss, aud and
// exp; this adds iat, azp, nonce, at_hash and sub) and returns its claims.
// nonce is checked when not empty, and at_hash when the token has one and
// accessToken is not empty.
func (c *Client) verifyIDToken(ctx context.Context, p domain.IdentityProvider, d *discovered, raw, nonce, accessToken string) (map[string]any, error) {
	c.verifications.Add(1)
	now := c.clock.Now()
	v := oidc.NewVerifier(d.issuer, d.keys, &oidc.Config{
		ClientID:             p.ClientID,
		SupportedSigningAlgs: d.algs,
		// go-oidc refuses a token expired a nanosecond ago: give it a
		// clock maxClockSkew behind ours.
		Now: func() time.Time { return now.Add(-maxClockSkew) },
	})
	ctx, probe := withFetchProbe(ctx)
	tok, err := v.Verify(ctx, raw)
	if err != nil {
		if probe.err != nil {
			return nil, fail(domain.ErrUpstreamDiscovery, probe.err)
		}
		return nil, fail(domain.ErrUpstreamIDToken, err)
	}
	bad := func(msg string) error { return fail(domain.ErrUpstreamIDToken, errors.New("ID token: "+msg)) }
	var payload json.RawMessage
	if err := tok.Claims(&payload); err != nil {
		return nil, bad("claims are not JSON")
	}
	claims, err := decodeObject(payload)
	if err != nil {
		return nil, bad("claims are not a JSON object")
	}
	switch {
	case tok.IssuedAt.IsZero():
		return nil, bad("no iat")
	case tok.IssuedAt.After(now.Add(maxClockSkew)):
		return nil, bad("issued in the future")
	case len(tok.Audience) > 1 && str(claims, "azp") != p.ClientID:
		// OpenID Connect Core §3.1.3.7: with several audiences, the
		// token must have been issued to us.
		return nil, bad("several audiences and azp is not the client")
	case nonce != "" && subtle.ConstantTimeCompare([]byte(tok.Nonce), []byte(nonce)) != 1:
		return nil, bad("nonce missing or not the one sent")
	}
	if accessToken != "" && tok.AccessTokenHash != "" {
		if err := tok.VerifyAccessToken(accessToken); err != nil {
			return nil, bad("at_hash does not match the access token")
		}
	}
	if err := domain.CheckSubject(tok.Subject); err != nil {
		return nil, fail(domain.ErrUpstreamUserInfo, errors.New("ID token: no usable sub"))
	}
	return claims, nil
}

// oidcIdentity is who the verified ID token claims say signed in. E-mail
// or name missing from them are read from userinfo, which must be about the
// same subject (OpenID Connect Core §5.3.2).
func (c *Client) oidcIdentity(ctx context.Context, p domain.IdentityProvider, d *discovered, claims map[string]any, accessToken string) (ports.UpstreamIdentity, error) {
	id := identityFromClaims(claims)
	id.Profile = claims
	if (id.Email == "" || id.Name == "") && d.userinfo != "" && accessToken != "" {
		info, err := c.userInfo(ctx, d.userinfo, accessToken)
		if err != nil {
			return ports.UpstreamIdentity{}, err
		}
		if str(info, "sub") != id.Subject {
			return ports.UpstreamIdentity{}, fail(domain.ErrUpstreamUserInfo, errors.New("userinfo is about another subject than the ID token"))
		}
		u := identityFromClaims(info)
		if id.Email == "" {
			id.Email, id.EmailVerified = u.Email, u.EmailVerified
		}
		if id.Name == "" {
			id.Name = u.Name
		}
		if id.Image == "" {
			id.Image = u.Image
		}
		id.Profile = info
	}
	preferredUsernameFallback(p.Preset, &id, claims, id.Profile)
	return id, nil
}

// userInfo reads the userinfo endpoint with accessToken. A signed or
// encrypted answer (application/jwt) is not read.
func (c *Client) userInfo(ctx context.Context, endpoint, accessToken string) (map[string]any, error) {
	req, err := get(endpoint, "application/json", accessToken)
	if err != nil {
		return nil, fail(domain.ErrUpstreamUserInfo, fmt.Errorf("userinfo: %w", err))
	}
	resp, err := c.send(ctx, req, domain.ErrUpstreamUserInfo, "userinfo")
	if err != nil {
		return nil, err
	}
	if !resp.ok() {
		return nil, fail(domain.ErrUpstreamUserInfo, fmt.Errorf("userinfo: status %d", resp.status))
	}
	if resp.mediaType() == "application/jwt" {
		return nil, fail(domain.ErrUpstreamUserInfo, errors.New("userinfo: a signed answer is not supported"))
	}
	info, err := decodeObject(resp.body)
	if err != nil {
		return nil, fail(domain.ErrUpstreamUserInfo, fmt.Errorf("userinfo: %w", err))
	}
	return info, nil
}

// identityFromClaims reads the standard claims (OpenID Connect Core §5.1)
// of an ID token or a userinfo answer. email_verified may be a boolean or,
// from some providers, the string "true"; an address is verified only when
// it says so.
func identityFromClaims(m map[string]any) ports.UpstreamIdentity {
	id := ports.UpstreamIdentity{
		Subject: str(m, "sub"),
		Email:   str(m, "email"),
		Name:    str(m, "name"),
		Image:   str(m, "picture"),
		AMR:     strs(m["amr"]),
	}
	if id.Email != "" {
		switch v := m["email_verified"].(type) {
		case bool:
			id.EmailVerified = v
		case string:
			id.EmailVerified = strings.EqualFold(v, "true")
		}
	}
	return id
}

// preferredUsernameFallback gives a Microsoft Entra identity without an
// e-mail the preferred_username of the first of sources that has one
// shaped like an address. Entra does not vouch for it (it is whatever the
// tenant typed), so it is never verified.
func preferredUsernameFallback(preset domain.IdentityProviderPreset, id *ports.UpstreamIdentity, sources ...map[string]any) {
	if preset != domain.PresetMicrosoft || id.Email != "" {
		return
	}
	for _, m := range sources {
		if u := str(m, "preferred_username"); u != "" {
			if _, err := domain.NewEmail(u); err == nil {
				id.Email, id.EmailVerified = u, false
				return
			}
		}
	}
}

// decodeObject decodes a JSON object, numbers kept as json.Number so ids
// keep every digit.
func decodeObject(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, errors.New("not a JSON object")
	}
	return m, nil
}

// str returns m[k] when it is a string.
func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// strs returns v's strings when it is an array of them.
func strs(v any) []string {
	a, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(a))
	for _, e := range a {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
