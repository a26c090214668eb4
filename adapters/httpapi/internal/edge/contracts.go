package edge

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humagin"
	"github.com/gin-gonic/gin"
)

// Contract names one of the three published API documents.
type Contract string

// The published contracts.
const (
	// ContractFramework holds the authentication framework (/api/auth/*).
	ContractFramework Contract = "framework"
	// ContractAuth holds the service and admin operations plus the framework's.
	ContractAuth Contract = "auth"
	// ContractBackend holds the trusted operations called with a service key.
	ContractBackend Contract = "backend"
)

// The paths the contracts are published at.
const (
	frameworkBase     = FrameworkBase
	adminBase         = AdminBase
	FrameworkSpecPath = frameworkBase + "/open-api/generate-schema"
	AuthSpecPath      = "/api/auth-openapi.json"
	BackendSpecPath   = "/api/backend-openapi.json"
)

// Security scheme names used in the documents.
const (
	SchemeSessionCookie = "sessionCookie"
	SchemeSessionBearer = "sessionBearer"
	SchemeKeyBearer     = "serviceKeyBearer"
	SchemeKeyHeader     = "serviceKeyHeader"
)

// contract is one published document: the API that routes its own operations
// on the gin engine, and a second, document-only API sharing the same OpenAPI
// value, through which operations routed by another contract are listed here
// too. Every operation is routed exactly once.
type contract struct {
	routed huma.API
	docs   huma.API
	// The marshalled document: it is fixed once every route is registered
	// (Freeze), and marshalled at its first request, not at every start
	// (tens of milliseconds, a third of starting the server).
	specOnce sync.Once
	spec     []byte
}

// docOnlyAdapter documents operations without routing them.
type docOnlyAdapter struct{ http.Handler }

func (docOnlyAdapter) Handle(*huma.Operation, func(huma.Context)) {}

func newContract(engine *gin.Engine, cfg Config, title, description string, schemes map[string]*huma.SecurityScheme) *contract {
	hc := huma.DefaultConfig(title, cfg.Version)
	hc.Info.Description = description
	hc.Servers = []*huma.Server{{URL: cfg.BaseURL}}
	hc.OpenAPIPath, hc.DocsPath, hc.SchemasPath = "", "", "" // we serve documents ourselves; huma's docs page needs a CDN
	hc.CreateHooks = nil                                     // no "$schema" body field, no Link header
	hc.Components.SecuritySchemes = schemes
	return &contract{routed: humagin.New(engine, hc), docs: huma.NewAPI(hc, docOnlyAdapter{http.NotFoundHandler()})}
}

// newContracts creates the three documents on engine.
func newContracts(engine *gin.Engine, cfg Config) map[Contract]*contract {
	session := map[string]*huma.SecurityScheme{
		SchemeSessionCookie: {Type: "apiKey", In: "cookie", Name: cfg.SessionCookieName,
			Description: "The session cookie set by sign-in."},
		SchemeSessionBearer: {Type: "http", Scheme: "bearer",
			Description: "The session token, for callers that cannot keep cookies."},
	}
	keys := map[string]*huma.SecurityScheme{
		SchemeKeyBearer: {Type: "http", Scheme: "bearer", Description: "A service key: Authorization: Bearer gh_sk_…"},
		SchemeKeyHeader: {Type: "apiKey", In: "header", Name: "x-api-key", Description: "A service key in the x-api-key header."},
	}
	return map[Contract]*contract{
		ContractFramework: newContract(engine, cfg, "Gatehouse authentication framework",
			"Sign-up, sign-in, sessions and the rest of the authentication framework under /api/auth. "+
				"It speaks Better Auth's wire protocol, so the better-auth client works against it.", session),
		ContractAuth: newContract(engine, cfg, "Gatehouse auth and admin API",
			"The service and administration operations together with the authentication framework's.", session),
		ContractBackend: newContract(engine, cfg, "Gatehouse trusted backend API",
			"Operations your own backends call server to server with a service key.", keys),
	}
}

// Group is how a contract package registers its operations (Add): the
// vocabulary it answers in, in each contract, and what it declares on every
// one of its operations. Each package builds its Group once, in its New.
type Group struct {
	Kit *Kit
	// Words is the package's vocabulary for its operations in contract c.
	Words func(c Contract) Words
	// Declare, when set, adds what the package declares on each of its
	// operations routed in contract c (a policy, a note), before Words.
	Declare func(c Contract, op huma.Operation) huma.Operation
}

// Speaks is a Group's Words when a package answers in one vocabulary in
// every contract.
func Speaks(w Words) func(Contract) Words { return func(Contract) Words { return w } }

// Add routes op in contract c in g's vocabulary, with what g declares on
// every operation, and documents it in the contracts listed in alsoIn
// (Register).
func Add[I, O any](g Group, c Contract, op huma.Operation, h func(context.Context, *I) (*O, error), alsoIn ...Contract) {
	if g.Declare != nil {
		op = g.Declare(c, op)
	}
	Register(g.Kit, c, WithWords(op, g.Words(c)), h, alsoIn...)
}

// Register routes op in contract c and documents it in the contracts listed
// in alsoIn. Error responses are documented in the shape the route really
// sends: Better Auth's {message, code} under /api/auth, problem+json elsewhere.
func Register[I, O any](s *Kit, c Contract, op huma.Operation, h func(context.Context, *I) (*O, error), alsoIn ...Contract) {
	op.MaxBodyBytes = s.Config.MaxBodyBytes
	errorStatuses := append([]int(nil), op.Errors...)
	op.Errors = nil
	t := reflect.TypeFor[I]()
	if t.NumField() > 0 {
		errorStatuses = append(errorStatuses, http.StatusBadRequest)
	}
	errorStatuses = append(errorStatuses, http.StatusInternalServerError)

	policy := operationPolicy(c, op)
	policy.Inputs = inputLocations(t)
	document := func(api huma.API) huma.Operation {
		o := op
		if impersonationRefused(op, policy) {
			o.Description += ImpersonationNote(policy.Word(Condition{Status: http.StatusForbidden, Code: "admin.impersonation_read_only"}).Code)
		}
		o.Responses = map[string]*huma.Response{}
		for k, v := range op.Responses {
			o.Responses[k] = v
		}
		body, ct := reflect.TypeFor[Problem](), "application/problem+json"
		if policy.Shape.Framework() {
			body, ct = reflect.TypeFor[FrameworkError](), "application/json"
		}
		schema := api.OpenAPI().Components.Schemas.Schema(body, true, body.Name())
		for _, status := range errorStatuses {
			o.Responses[strconv.Itoa(status)] = &huma.Response{
				Description: http.StatusText(status),
				Content:     map[string]*huma.MediaType{ct: {Schema: schema}},
			}
		}
		return o
	}
	s.policies.Set(op.Method, ginPath(op.Path), policy)
	huma.Register(s.contracts[c].routed, document(s.contracts[c].routed), h)
	shareSuccessBody(s.contracts[c].routed, op)
	documentForm(s.contracts[c].routed, op, policy)
	for _, other := range alsoIn {
		huma.Register(s.contracts[other].docs, document(s.contracts[other].docs), h)
		shareSuccessBody(s.contracts[other].docs, op)
		documentForm(s.contracts[other].docs, op, policy)
	}
}

// impersonationRefused reports whether the operation o, documented as
// reading the session, refuses an impersonation session under policy p
// (Policy.WhileImpersonating).
func impersonationRefused(o huma.Operation, p Policy) bool {
	session := false
	for _, req := range o.Security {
		session = session || has(req, SchemeSessionCookie)
	}
	return session && !p.WhileImpersonating.allows(o.Method)
}

// policyMetadata is the huma.Operation metadata entry holding what the
// operation declares of its policy (WithPolicy).
const policyMetadata = "gatehouse.policy"

// WithPolicy declares parts of o's policy; the rest follows its contract and
// its security (operationPolicy).
func WithPolicy(o huma.Operation, set ...func(*Policy)) huma.Operation {
	md := make(map[string]any, len(o.Metadata)+1)
	for k, v := range o.Metadata {
		md[k] = v
	}
	prev, _ := o.Metadata[policyMetadata].([]func(*Policy))
	var all []func(*Policy)
	md[policyMetadata] = append(append(all, prev...), set...)
	o.Metadata = md
	return o
}

// WithRate declares o's rate rule.
func WithRate(o huma.Operation, r Rate) huma.Operation {
	return WithPolicy(o, func(p *Policy) { p.Rate = r })
}

// WithForm declares the hosted page whose HTML form posts to o.
func WithForm(o huma.Operation, f *Form) huma.Operation {
	return WithPolicy(o, FormPage(f))
}

// operationPolicy is the policy o declares. Unless it says otherwise: the
// framework's operations speak Better Auth's wire, allow its trusted origins
// and are browser routes of the session cookie (Better Auth checks the origin
// of every state-changing request); the others speak problem+json and read
// the credential their documented security names. Operations taking a
// service key are limited per key, the rest by the general rule.
func operationPolicy(c Contract, o huma.Operation) Policy {
	p := Policy{Rate: RateGeneral}
	if c == ContractFramework {
		p.Shape, p.Security, p.CORS = ShapeFramework, SecuritySession, CORSTrusted
	}
	for _, req := range o.Security {
		switch {
		case has(req, SchemeKeyBearer):
			p.Security, p.Rate = SecurityServiceKey, RateServiceKey
		case has(req, SchemeOAuthBearer):
			p.Security = SecurityAccessToken
		case has(req, SchemeSessionCookie):
			p.Security = SecuritySession
		}
	}
	if set, ok := o.Metadata[policyMetadata].([]func(*Policy)); ok {
		for _, f := range set {
			f(&p)
		}
	}
	return p
}

// inputLocations maps each query, path and header parameter of the input
// type t (embedded structs included) to its location, by its wire name.
func inputLocations(t reflect.Type) map[string]string {
	var out map[string]string
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous {
				walk(f.Type)
				continue
			}
			for _, in := range []string{"query", "path", "header"} {
				name, _, _ := strings.Cut(f.Tag.Get(in), ",")
				if name == "" {
					continue
				}
				if out == nil {
					out = map[string]string{}
				}
				out[name] = in
			}
		}
	}
	walk(t)
	return out
}

func has(req map[string][]string, scheme string) bool {
	_, ok := req[scheme]
	return ok
}

// documentForm lists the HTML form encoding beside JSON, with the same
// schema, on an operation that declares a form page (formBodies accepts it).
func documentForm(api huma.API, op huma.Operation, p Policy) {
	if p.Form == nil || op.Method != http.MethodPost {
		return
	}
	item := api.OpenAPI().Paths[op.Path]
	if item == nil || item.Post == nil || item.Post.RequestBody == nil {
		return
	}
	if js := item.Post.RequestBody.Content["application/json"]; js != nil {
		item.Post.RequestBody.Content["application/x-www-form-urlencoded"] = &huma.MediaType{Schema: js.Schema}
	}
}

// shareSuccessBody gives each extra response declared without content (such
// as readiness's 503) the body schema of the operation's success response:
// the handler sends the same type with another status.
func shareSuccessBody(api huma.API, op huma.Operation) {
	item := api.OpenAPI().Paths[op.Path]
	if item == nil {
		return
	}
	documented := map[string]*huma.Operation{
		http.MethodGet: item.Get, http.MethodPost: item.Post, http.MethodPut: item.Put,
		http.MethodPatch: item.Patch, http.MethodDelete: item.Delete,
	}[op.Method]
	if documented == nil {
		return
	}
	success := documented.Responses[strconv.Itoa(documented.DefaultStatus)]
	if success == nil {
		success = documented.Responses["200"]
	}
	for status, r := range documented.Responses {
		if r.Content == nil && success != nil && status != "204" {
			r.Content = success.Content
		}
	}
}

// Freeze marshals each document once all routes are registered.
func (s *Kit) Freeze() {
	for _, c := range s.contracts {
		keepUsedSchemes(c.routed.OpenAPI())
	}
}

func (s *Kit) ServeSpec(c Contract) gin.HandlerFunc {
	doc := s.contracts[c]
	return func(ctx *gin.Context) {
		ctx.Header("Cache-Control", "no-cache")
		ctx.Data(http.StatusOK, "application/json", doc.marshalled())
	}
}

// marshalled returns the contract's document as JSON, marshalled once.
func (c *contract) marshalled() []byte {
	c.specOnce.Do(func() {
		spec, err := json.Marshal(c.routed.OpenAPI())
		if err != nil {
			panic("httpapi: marshal contract: " + err.Error())
		}
		c.spec = spec
	})
	return c.spec
}

// keepUsedSchemes drops the security schemes that neither the document nor
// any of its operations asks for, so the explorer's Authorize dialog offers
// only credentials that some operation of this contract takes. The schemes
// are declared per contract family (session, service key) and the OAuth one
// everywhere; which operations each contract holds decides what stays. The
// map is replaced, not edited: contracts share their declared maps.
func keepUsedSchemes(doc *huma.OpenAPI) {
	if doc.Components == nil || doc.Components.SecuritySchemes == nil {
		return
	}
	used := map[string]bool{}
	mark := func(reqs []map[string][]string) {
		for _, req := range reqs {
			for name := range req {
				used[name] = true
			}
		}
	}
	mark(doc.Security)
	for _, item := range doc.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Put, item.Post, item.Delete, item.Options, item.Head, item.Patch, item.Trace} {
			if op != nil {
				mark(op.Security)
			}
		}
	}
	kept := map[string]*huma.SecurityScheme{}
	for name, scheme := range doc.Components.SecuritySchemes {
		if used[name] {
			kept[name] = scheme
		}
	}
	doc.Components.SecuritySchemes = kept
}

// SchemeOAuthBearer documents OAuth access tokens (userinfo).
const SchemeOAuthBearer = "oauthAccessToken"

// SessionSecurity documents that an operation needs a signed-in session.
var SessionSecurity = []map[string][]string{{SchemeSessionCookie: {}}, {SchemeSessionBearer: {}}}

// KeySecurity documents that a trusted operation takes a service key in
// either header.
var KeySecurity = []map[string][]string{{SchemeKeyBearer: {}}, {SchemeKeyHeader: {}}}

// JSDate formats t as JavaScript's Date.toJSON does: UTC with exactly three
// fractional digits. The better-auth client turns such strings into Dates;
// Go's default nanosecond form it leaves as strings.
func JSDate(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.Format("2006-01-02T15:04:05.000Z")
	}
	// Written out by hand: every get-session formats five or six of these,
	// and time.Format reads its layout anew each time.
	hour, minute, sec := t.Clock()
	b := [24]byte{4: '-', 7: '-', 10: 'T', 13: ':', 16: ':', 19: '.', 23: 'Z'}
	put := func(at, v, width int) {
		for i := at + width - 1; i >= at; i-- {
			b[i] = byte('0' + v%10)
			v /= 10
		}
	}
	put(0, year, 4)
	put(5, int(month), 2)
	put(8, day, 2)
	put(11, hour, 2)
	put(14, minute, 2)
	put(17, sec, 2)
	put(20, t.Nanosecond()/int(time.Millisecond), 3)
	return string(b[:])
}

// StatusJSON is the {status:true} answer of many framework operations.
type StatusJSON struct {
	Status bool `json:"status" doc:"Always true on success." example:"true"`
}

// StatusOutput answers {status:true}, with session headers.
type StatusOutput struct {
	SessionHeaders
	Body StatusJSON
}

func StatusOK() *StatusOutput { return &StatusOutput{Body: StatusJSON{Status: true}} }

func OptionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// NoContentOutput answers 204.
type NoContentOutput struct {
	Status int
}

// PublicDocument declares a public document of the framework (the key set,
// discovery): any browser origin may read it, and no cookie is read.
func PublicDocument(p *Policy) {
	p.CORS, p.Security, p.Rate = CORSOpen, SecurityNone, RatePublic
}

// OAuthEndpoint declares an OAuth endpoint that clients and resource servers
// call with their own credentials, never the session cookie (token,
// revocation, introspection, userinfo): it skips the origin check, any
// browser origin may call it (CORS with "*", no credentials), and its errors,
// the edge's input checks' too, take OAuth's shape (RFC 6749 §5.2). Consent
// and end-session use the session cookie, so they keep the framework's rules.
func OAuthEndpoint(p *Policy) {
	p.Shape, p.CORS, p.Security = ShapeOAuth, CORSOpen, SecurityAccessToken
}

// WithWords declares the vocabulary o answers in, unless o declares its own:
// each contract package registers its operations through a helper that
// calls this with its Words.
func WithWords(o huma.Operation, w Words) huma.Operation {
	return WithPolicy(o, func(p *Policy) {
		if p.Words == nil {
			p.Words = w
		}
	})
}
