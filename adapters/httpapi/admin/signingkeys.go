package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/domain"
)

// SigningKeyJSON is a signing key as administrators see it: never its
// private half.
type SigningKeyJSON struct {
	ID             string     `json:"id" doc:"The key's kid."`
	Alg            string     `json:"alg" enum:"EdDSA,RS256"`
	Status         string     `json:"status" enum:"pending,active,retired" doc:"pending keys are published and sign from activatesAt; active keys sign (the latest activated of each algorithm); retired ones only verify."`
	CreatedAt      time.Time  `json:"createdAt"`
	ActivatesAt    time.Time  `json:"activatesAt" doc:"When the key starts (or started) signing: after a rotation, once every instance publishes it."`
	RetiredAt      *time.Time `json:"retiredAt" nullable:"true" doc:"When a newer key replaces (or replaced) it, possibly ahead, or null."`
	PublishedUntil *time.Time `json:"publishedUntil" nullable:"true" doc:"When a retired key leaves the key set (its tokens have all expired by then), or null."`
}

func signingKeyJSON(v oidc.SigningKeyView) SigningKeyJSON {
	return SigningKeyJSON{ID: string(v.ID), Alg: string(v.Alg), Status: v.Status, CreatedAt: v.CreatedAt, ActivatesAt: v.ActivatesAt,
		RetiredAt: edge.OptionalTime(v.RetiredAt), PublishedUntil: edge.OptionalTime(v.PublishedUntil)}
}

// SigningKeyListOutput lists signing keys.
type SigningKeyListOutput struct {
	Body struct {
		Data []SigningKeyJSON `json:"data"`
	}
}

func signingKeyList(views []oidc.SigningKeyView) *SigningKeyListOutput {
	out := &SigningKeyListOutput{}
	out.Body.Data = make([]SigningKeyJSON, len(views))
	for i, v := range views {
		out.Body.Data[i] = signingKeyJSON(v)
	}
	return out
}

func (s *API) listSigningKeys(ctx context.Context, _ *struct{}) (*SigningKeyListOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	views, err := s.SigningKeys.List(ctx, req)
	if err != nil {
		return nil, err
	}
	return signingKeyList(views), nil
}

// RotateSigningKeysInput names the algorithm to rotate, or none for both.
type RotateSigningKeysInput struct {
	Body *struct {
		Alg       string `json:"alg,omitempty" enum:"EdDSA,RS256" doc:"The algorithm whose key to replace; absent: both."`
		Immediate bool   `json:"immediate,omitempty" doc:"For a compromised key: the new key signs at once and the old one is retired now. Other instances publish the new key only at their next reload (up to one reload interval), and until then their key sets cannot verify its tokens."`
	}
}

func (s *API) rotateSigningKeys(ctx context.Context, in *RotateSigningKeysInput) (*SigningKeyListOutput, error) {
	req, err := s.KeyRequest(ctx)
	if err != nil {
		return nil, err
	}
	var cmd oidc.RotateSigningKeys
	if in.Body != nil {
		if in.Body.Alg != "" {
			cmd.Algs = []domain.SigningAlgorithm{domain.SigningAlgorithm(in.Body.Alg)}
		}
		cmd.Immediate = in.Body.Immediate
	}
	views, err := s.SigningKeys.Rotate(ctx, req, cmd)
	if err != nil {
		return nil, err
	}
	return signingKeyList(views), nil
}

// AddSigningKeyRoutes registers the administration of signing keys.
func (s *API) AddSigningKeyRoutes() {
	type op = huma.Operation
	const tagKeys = "Signing keys"
	adminOp := func(o op) op {
		o.Path = edge.AdminBase + o.Path
		o.Security = edge.SessionSecurity
		o.Description += " Needs a platform administrator's session: 401 without a session, 403 for anyone else."
		o.Errors = append(o.Errors, http.StatusUnauthorized, http.StatusForbidden)
		return o
	}
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "listSigningKeys", Method: http.MethodGet, Path: "/signing-keys", Tags: []string{tagKeys},
		Summary: "List signing keys", Description: "The published signing keys, newest first: the active key of each algorithm, any pending one, and the retired ones still in the key set."}),
		s.listSigningKeys)
	edge.Add(s.routes, edge.ContractAuth, adminOp(op{OperationID: "rotateSigningKeys", Method: http.MethodPost, Path: "/signing-keys/rotate", Tags: []string{tagKeys},
		Summary: "Rotate signing keys",
		Description: "Makes a new key for alg (both algorithms when absent). It is published at once (pending) and signs from its activatesAt, two key " +
			"reload intervals later (2 minutes by default), when every instance publishes it; the key it replaces signs until then, then is retired " +
			"but stays in the key set until every token it signed has expired. With immediate (a compromised key) the new key signs at once and the " +
			"old one is retired now: other instances' key sets lack the new key for up to one reload interval. Audited."}),
		s.rotateSigningKeys)
}
