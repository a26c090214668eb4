package federation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// githubAPIVersion is the REST API version the client speaks.
const githubAPIVersion = "2022-11-28"

// githubEmail is an entry of GitHub's GET /user/emails.
type githubEmail struct {
	Email    string `json:"email"`
	Primary  bool   `json:"primary"`
	Verified bool   `json:"verified"`
}

// github reads who holds token from GitHub's REST API: GET /user for the
// numeric id (the subject), name (or login) and avatar, and GET
// /user/emails for the primary address GitHub has verified. Without one
// (or without the user:email scope, when /user/emails is refused) the
// profile's public address is taken, unverified.
func (c *Client) github(ctx context.Context, p domain.IdentityProvider, token string) (ports.UpstreamIdentity, error) {
	api := strings.TrimSuffix(p.Endpoints.API, "/")
	if api == "" {
		return ports.UpstreamIdentity{}, fail(domain.ErrUpstreamDiscovery, errors.New("github: no API root"))
	}
	resp, err := c.githubGet(ctx, api+"/user", token)
	if err != nil {
		return ports.UpstreamIdentity{}, err
	}
	if !resp.ok() {
		return ports.UpstreamIdentity{}, fail(domain.ErrUpstreamUserInfo, fmt.Errorf("github: /user: status %d", resp.status))
	}
	user, err := decodeObject(resp.body)
	if err != nil {
		return ports.UpstreamIdentity{}, fail(domain.ErrUpstreamUserInfo, fmt.Errorf("github: /user: %w", err))
	}
	n, _ := user["id"].(json.Number)
	if _, err := strconv.ParseUint(n.String(), 10, 64); err != nil || domain.CheckSubject(n.String()) != nil {
		return ports.UpstreamIdentity{}, fail(domain.ErrUpstreamUserInfo, errors.New("github: /user: no numeric id"))
	}
	id := ports.UpstreamIdentity{
		Subject: n.String(),
		Name:    str(user, "name"),
		Image:   str(user, "avatar_url"),
		Email:   str(user, "email"),
		Profile: user,
	}
	if id.Name == "" {
		id.Name = str(user, "login")
	}
	resp, err = c.githubGet(ctx, api+"/user/emails", token)
	if err != nil {
		return ports.UpstreamIdentity{}, err
	}
	switch {
	case resp.status == http.StatusForbidden || resp.status == http.StatusNotFound:
		// No user:email scope: the public address, unverified.
		return id, nil
	case !resp.ok():
		return ports.UpstreamIdentity{}, fail(domain.ErrUpstreamUserInfo, fmt.Errorf("github: /user/emails: status %d", resp.status))
	}
	var emails []githubEmail
	if err := json.Unmarshal(resp.body, &emails); err != nil {
		return ports.UpstreamIdentity{}, fail(domain.ErrUpstreamUserInfo, errors.New("github: /user/emails: not a list of addresses"))
	}
	for _, e := range emails {
		if e.Primary && e.Verified && e.Email != "" {
			id.Email, id.EmailVerified = e.Email, true
			break
		}
	}
	return id, nil
}

// githubGet reads an API resource with token, as GitHub asks (its media
// type, API version and a User-Agent).
func (c *Client) githubGet(ctx context.Context, u, token string) (*response, error) {
	req, err := get(u, "application/vnd.github+json", token)
	if err != nil {
		return nil, fail(domain.ErrUpstreamDiscovery, fmt.Errorf("github: %w", err))
	}
	req.Header.Set("X-GitHub-Api-Version", githubAPIVersion)
	return c.send(ctx, req, domain.ErrUpstreamUserInfo, "github API")
}
