package oidc

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"html/template"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/domain"
)

// documentOAuth finishes what registration (edge.Add) documents for the OAuth endpoints:
// their form bodies, the OAuth error shape of the token, revocation,
// introspection and userinfo endpoints, and the HTML error page of the
// browser endpoints.
func (s *API) documentOAuth() {
	forms := map[string]reflect.Type{
		"/oauth2/authorize":  reflect.TypeFor[AuthorizeForm](),
		"/oauth2/token":      reflect.TypeFor[TokenForm](),
		"/oauth2/revoke":     reflect.TypeFor[RevokeForm](),
		"/oauth2/introspect": reflect.TypeFor[IntrospectForm](),
		"/oauth2/userinfo":   reflect.TypeFor[UserInfoForm](),
	}
	var oauthShaped []string
	s.Policies().Each(func(_, template string, p edge.Policy) {
		if p.Shape == edge.ShapeOAuth && !slices.Contains(oauthShaped, template) {
			oauthShaped = append(oauthShaped, template) // literal paths: the template is the contract's path
		}
	})
	for _, doc := range s.Documents() {
		oapi := doc
		if oapi.Components.SecuritySchemes == nil {
			oapi.Components.SecuritySchemes = map[string]*huma.SecurityScheme{}
		}
		oapi.Components.SecuritySchemes[edge.SchemeOAuthBearer] = &huma.SecurityScheme{Type: "http", Scheme: "bearer", BearerFormat: "JWT",
			Description: "An OAuth access token from the token endpoint."}
		for path, t := range forms {
			item := oapi.Paths[edge.FrameworkBase+path]
			if item == nil || item.Post == nil {
				continue
			}
			schema := oapi.Components.Schemas.Schema(t, true, t.Name())
			item.Post.RequestBody = &huma.RequestBody{Required: path != "/oauth2/userinfo",
				Content: map[string]*huma.MediaType{"application/x-www-form-urlencoded": {Schema: schema}}}
		}
		errSchema := oapi.Components.Schemas.Schema(reflect.TypeFor[edge.OAuthError](), true, "OAuthError")
		for _, path := range oauthShaped {
			item := oapi.Paths[path]
			if item == nil {
				continue
			}
			for _, o := range []*huma.Operation{item.Get, item.Post} {
				if o == nil {
					continue
				}
				o.Responses[strconv.Itoa(http.StatusBadRequest)] = &huma.Response{Description: "Bad Request"}
				for status, r := range o.Responses {
					if n, _ := strconv.Atoi(status); n >= 400 && n != http.StatusTooManyRequests {
						r.Content = map[string]*huma.MediaType{"application/json": {Schema: errSchema}}
					}
				}
			}
		}
	}
}

// UserInfoForm is userinfo's optional form body (RFC 6750 §2.2).
type UserInfoForm struct {
	AccessToken string `json:"access_token,omitempty" doc:"The access token, when not sent as Authorization: Bearer."`
}

// oauthPageCSS is the error page's only style, allowed by its hash.
const oauthPageCSS = "body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1b1f24}" +
	"h1{font-size:1.5rem}code{background:#f0f2f4;padding:.1rem .3rem;border-radius:3px}"

var oauthPageCSP = func() string {
	sum := sha256.Sum256([]byte(oauthPageCSS))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; img-src 'self'; " +
		"form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
}()

var oauthPageTemplate = template.Must(template.New("oauth-error").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Sign-in request refused · Gatehouse</title>
<style>{{.CSS}}</style>
</head>
<body>
<main>
<h1>This sign-in request cannot continue</h1>
<p role="alert">{{.Description}}</p>
<p>Error code: <code>{{.Code}}</code></p>
<p>Go back to the application you came from and try again. If this keeps happening, tell its administrator.</p>
</main>
</body>
</html>
`))

// oauthPage is the 400 HTML page shown instead of a redirect when the
// request's client or redirect URI cannot be trusted (RFC 6749 §4.1.2.1).
func oauthPage(err error) *BrowserRedirect {
	code, desc := "invalid_request", "The request is invalid."
	var de *domain.Error
	if errors.As(err, &de) && edge.ErrorCodePattern.MatchString(de.Code) {
		code, desc = de.Code, de.Message
	}
	var b strings.Builder
	_ = oauthPageTemplate.Execute(&b, struct {
		CSS         template.CSS
		Code        string
		Description string
	}{template.CSS(oauthPageCSS), code, desc}) // #nosec G203 -- oauthPageCSS is a constant; code and desc are escaped by the template
	return &BrowserRedirect{Status: http.StatusBadRequest, ContentType: "text/html; charset=utf-8", ContentSecurityPolicy: oauthPageCSP, Body: []byte(b.String())}
}
