package console

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/domain"
)

// idpView is the Identity providers section: the list with the form that
// registers one, or one provider's page with the form that changes it.
type idpView struct {
	Rows     []idpRow
	Provider *idpRow
	Form     idpForm
	// Confirm is a refused deletion's typed confirmation, shown again.
	Confirm string
}

// idpRow is a provider as the console shows it: never its secret.
type idpRow struct {
	ID, Preset, Name, Issuer, ClientID, Callback, Org, Role, Path string
	Scopes, Domains                                               []string
	SecretSet, Trusted, Enabled, RequireSSO                       bool
	Created, Updated                                              time.Time
}

// idpForm is a provider's form as sent (or, on its page, as stored),
// each field trimmed and bounded as the admin API's schema bounds it. The
// client secret is write-only: it is never put back in a form
// (idpSecretForm).
type idpForm struct {
	ID            string `form:"id,trim" validate:"maxbytes=64"`
	Preset        string `form:"preset,trim" validate:"maxbytes=16"`
	Name          string `form:"name,trim" validate:"maxbytes=512"`
	Issuer        string `form:"issuer,trim" validate:"maxbytes=2048"`
	ClientID      string `form:"clientId,trim" validate:"maxbytes=512"`
	Scopes        string `form:"scopes,trim" validate:"maxbytes=2048"`
	Authorization string `form:"authorization,trim" validate:"maxbytes=2048"`
	Token         string `form:"token,trim" validate:"maxbytes=2048"`
	UserInfo      string `form:"userinfo,trim" validate:"maxbytes=2048"`
	JWKS          string `form:"jwks,trim" validate:"maxbytes=2048"`
	API           string `form:"api,trim" validate:"maxbytes=2048"`
	Org           string `form:"organizationId,trim" validate:"maxbytes=128"`
	Domains       string `form:"domains,trim" validate:"maxbytes=8192"`
	Role          string `form:"defaultRole,trim" validate:"maxbytes=16"`
	Trusted       bool   `form:"trustedForLinking"`
	Enabled       bool   `form:"enabled"`
	RequireSSO    bool   `form:"requireSso"`
}

// idpSecretForm is a provider's client secret as typed (empty on an
// update: the sealed one stays).
type idpSecretForm struct {
	Secret string `form:"clientSecret" validate:"maxbytes=4096"`
}

// IdentityProvidersDeps are the Identity providers section's use cases
// (identityproviders.go).
type IdentityProvidersDeps struct {
	Providers  *federation.Providers // the providers
	Federation *federation.SignIns   // their redirect URIs
}

// identityProvidersSection is the Identity providers section.
type identityProvidersSection struct {
	*base
	providers *federation.Providers
	signIns   *federation.SignIns
}

// addIdentityProviderRoutes registers the Identity providers section.
func (s *identityProvidersSection) addIdentityProviderRoutes(r shell.Section) {
	const base = Base + "/identity-providers"
	r.Get(base, s.identityProvidersPage)
	r.Get(base+"/:id", s.identityProviderPage)
	r.Post(base, s.createIdentityProvider)
	r.Post(base+"/:id/update", s.updateIdentityProvider)
	r.Post(base+"/:id/enable", s.setIdentityProviderEnabled(true))
	r.Post(base+"/:id/disable", s.setIdentityProviderEnabled(false))
	r.Post(base+"/:id/delete", s.deleteIdentityProvider)
}

func idpPath(id string) string { return Base + "/identity-providers/" + url.PathEscape(id) }

func (s *identityProvidersSection) idpRowOf(p domain.IdentityProvider) idpRow {
	r := idpRow{ID: string(p.ID), Preset: string(p.Preset), Name: p.Name, Issuer: p.Issuer, ClientID: p.ClientID,
		Callback: s.signIns.RedirectURI(p.ID), Org: string(p.OrganizationID), Role: string(p.DefaultRole), Path: idpPath(string(p.ID)),
		Scopes: p.Scopes, SecretSet: len(p.SealedClientSecret) > 0, Trusted: p.TrustedForLinking, Enabled: p.Enabled, RequireSSO: p.RequireSSO,
		Created: p.CreatedAt, Updated: p.UpdatedAt}
	for _, d := range p.Domains {
		r.Domains = append(r.Domains, string(d))
	}
	return r
}

// idpFormOfProvider is the edit form of a stored provider.
func idpFormOfProvider(p domain.IdentityProvider) idpForm {
	f := idpForm{ID: string(p.ID), Preset: string(p.Preset), Name: p.Name, Issuer: p.Issuer, ClientID: p.ClientID, Scopes: strings.Join(p.Scopes, " "),
		Authorization: p.Endpoints.Authorization, Token: p.Endpoints.Token, UserInfo: p.Endpoints.UserInfo, JWKS: p.Endpoints.JWKS, API: p.Endpoints.API,
		Org: string(p.OrganizationID), Role: string(p.DefaultRole), Trusted: p.TrustedForLinking, Enabled: p.Enabled, RequireSSO: p.RequireSSO}
	ds := make([]string, len(p.Domains))
	for i, d := range p.Domains {
		ds[i] = string(d)
	}
	f.Domains = strings.Join(ds, " ")
	return f
}

// identityProvidersPage lists the providers (federation.Providers.List,
// as GET /api/admin/identity-providers).
func (s *identityProvidersSection) identityProvidersPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	s.showIdentityProviders(c, v, http.StatusOK, "", "", idpForm{Preset: "oidc", Enabled: true})
}

func (s *identityProvidersSection) showIdentityProviders(c *gin.Context, v *shell.Visit, status int, msg, field string, f idpForm) {
	all, err := s.providers.List(c.Request.Context(), v.KeyRequest())
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	iv := &idpView{Form: f}
	for _, p := range all {
		iv.Rows = append(iv.Rows, s.idpRowOf(p))
	}
	p := sectionPage(v, "Identity providers", "identity-providers",
		deletedNotice(c.Request.URL.Query(), "The identity provider is deleted, with the accounts linked through it."))
	p.Error, p.Field = msg, field
	s.pages.providers.Render(c, status, p, iv)
}

// identityProviderPage shows one provider (federation.Providers.Get).
func (s *identityProvidersSection) identityProviderPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	s.showIdentityProvider(c, v, http.StatusOK, "", "", nil, "")
}

// showIdentityProvider renders a provider's page with status, and a
// refused form's error, field and input (nil: the stored values).
func (s *identityProvidersSection) showIdentityProvider(c *gin.Context, v *shell.Visit, status int, msg, field string, f *idpForm, confirm string) {
	id := c.Param("id")
	if len(id) > maxID {
		s.shell.Refusal(c, http.StatusBadRequest, "Bad request", "The provider id is too long.", edge.FieldError{Location: "path.id", Message: "is too long"})
		return
	}
	pr, err := s.providers.Get(c.Request.Context(), v.KeyRequest(), id)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	row := s.idpRowOf(pr)
	iv := &idpView{Provider: &row, Form: idpFormOfProvider(pr), Confirm: confirm}
	if f != nil {
		iv.Form = *f
	}
	p := sectionPage(v, row.Name, "identity-providers", idpNotices.Of(c))
	p.Error, p.Field = msg, field
	s.pages.providers.Render(c, status, p, iv)
}

var idpNotices = shell.Notices{
	"created": "The identity provider is registered. Register its redirect URI at the provider.", "updated": "The changes are saved.",
	"enabled": "The provider is enabled: sign-ins with it work.", "disabled": "The provider is disabled: sign-ins with it stop; its linked accounts are kept.",
}

// bindIdpForm binds a provider's form and its client secret, and says
// what is wrong with them and in which field ("" when nothing is): a field
// too long is emptied (not shown back) and named. id is the provider's
// when the page names it (an update: a posted id is not read), "" when the
// form does (a registration).
func bindIdpForm(c *gin.Context, id string) (f idpForm, secret, msg, field string) {
	var sf idpSecretForm
	vs := append(shell.BindForm(c, &f), shell.BindForm(c, &sf)...)
	if id != "" {
		f.ID = id
		vs = slices.DeleteFunc(vs, func(v shell.Violation) bool { return v.Name == "id" })
	}
	if bad, invalid := vs.First(); invalid {
		if bad.Name == "clientSecret" {
			return f, "", "The client secret is too long: at most 4096 bytes.", bad.Name
		}
		blank(&f, bad.Name)
		return f, "", "This field is too long.", bad.Name
	}
	msg, field = f.counted()
	return f, sf.Secret, msg, field
}

// counted bounds the lists the form's fields hold, as the admin API's
// schema does.
func (f *idpForm) counted() (msg, field string) {
	if len(strings.Fields(f.Scopes)) > 32 {
		return "Use at most 32 scopes.", "scopes"
	}
	if len(idpList(f.Domains)) > 50 {
		return "Use at most 50 domains.", "domains"
	}
	return "", ""
}

// idpList splits a list typed with spaces or commas.
func idpList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' || r == '\r' })
}

// input is the use case's input: every field of the form (the form shows
// them all), the secret only when one was typed.
func (f idpForm) input(id, secret string) federation.ProviderInput {
	scopes, domains := strings.Fields(f.Scopes), idpList(f.Domains)
	in := federation.ProviderInput{ID: id, Preset: &f.Preset, Name: &f.Name, Issuer: &f.Issuer, ClientID: &f.ClientID, ClientSecret: secret,
		Scopes: &scopes, TrustedForLinking: &f.Trusted, Enabled: &f.Enabled, OrganizationID: &f.Org, Domains: &domains, RequireSSO: &f.RequireSSO,
		Endpoints: &domain.IdentityProviderEndpoints{Authorization: f.Authorization, Token: f.Token, UserInfo: f.UserInfo, JWKS: f.JWKS, API: f.API}}
	if len(scopes) == 0 {
		in.Scopes = nil // the preset's
	}
	if f.Role != "" {
		in.DefaultRole = &f.Role
	}
	return in
}

// violationIndex is the "[n]" of a field violation ("domains[2]").
var violationIndex = regexp.MustCompile(`\[\d+\]$`)

// refusedField is what a use case's refusal says, and the form's field it
// names, for an invalid input or a conflict; ok is false for any other
// error, which is a refusal page.
func refusedField(err error) (msg, field string, ok bool) {
	var de *domain.Error
	if !errors.As(err, &de) || (de.Kind != domain.KindInvalid && de.Kind != domain.KindConflict) {
		return "", "", false
	}
	msg = de.Message + "."
	if len(de.Fields) > 0 {
		fv := de.Fields[0]
		field = violationIndex.ReplaceAllString(strings.TrimPrefix(fv.Field, "endpoints."), "")
		msg = de.Message + ": " + fv.Field + " " + fv.Message + "."
	}
	return msg, field, true
}

// idpStatus is the status of a refused form: 409 for a conflict, else 400.
func idpStatus(err error) int {
	if domain.KindOf(err) == domain.KindConflict {
		return http.StatusConflict
	}
	return http.StatusBadRequest
}

// createIdentityProvider registers a provider
// (federation.Providers.Create, as POST /api/admin/identity-providers).
func (s *identityProvidersSection) createIdentityProvider(c *gin.Context, v *shell.Visit) {
	f, secret, msg, field := bindIdpForm(c, "")
	if msg == "" && f.ID == "" { // after the form's bounds, as the page has always named them
		msg, field = "The id is required: a-z, 0-9 and -.", "id"
	}
	if msg != "" {
		s.showIdentityProviders(c, v, http.StatusBadRequest, msg, field, f)
		return
	}
	pr, err := s.providers.Create(c.Request.Context(), v.KeyRequest(), f.input(f.ID, secret))
	if err != nil {
		if msg, field, ok := refusedField(err); ok {
			if errors.Is(err, domain.ErrIdentityProviderExists) {
				field = "id"
			}
			s.showIdentityProviders(c, v, idpStatus(err), msg, field, f)
			return
		}
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, idpPath(string(pr.ID)), "created")
}

// updateIdentityProvider changes a provider (federation.Providers.Update,
// as PATCH /api/admin/identity-providers/{id}); an empty secret keeps the
// sealed one.
func (s *identityProvidersSection) updateIdentityProvider(c *gin.Context, v *shell.Visit) {
	f, secret, msg, field := bindIdpForm(c, c.Param("id"))
	if msg != "" {
		s.showIdentityProvider(c, v, http.StatusBadRequest, msg, field, &f, "")
		return
	}
	if _, err := s.providers.Update(c.Request.Context(), v.KeyRequest(), f.input(f.ID, secret)); err != nil {
		if msg, field, ok := refusedField(err); ok {
			s.showIdentityProvider(c, v, idpStatus(err), msg, field, &f, "")
			return
		}
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, idpPath(c.Param("id")), "updated")
}

// setIdentityProviderEnabled turns a provider on or off, as the admin
// API's enable and disable routes do (federation.Providers.Update).
func (s *identityProvidersSection) setIdentityProviderEnabled(on bool) func(c *gin.Context, v *shell.Visit) {
	return func(c *gin.Context, v *shell.Visit) {
		if _, err := s.providers.Update(c.Request.Context(), v.KeyRequest(), federation.ProviderInput{ID: c.Param("id"), Enabled: &on}); err != nil {
			s.shell.Refuse(c, err)
			return
		}
		what := "disabled"
		if on {
			what = "enabled"
		}
		shell.Done(c, idpPath(c.Param("id")), what)
	}
}

// deleteIdentityProvider removes a provider with its linked accounts
// (federation.Providers.Delete) once the typed confirmation is its id.
func (s *identityProvidersSection) deleteIdentityProvider(c *gin.Context, v *shell.Visit) {
	id := c.Param("id")
	if confirm := confirmation(c); confirm != id {
		if len(confirm) > 128 {
			confirm = ""
		}
		s.showIdentityProvider(c, v, http.StatusBadRequest, "Type the provider's id exactly to confirm. Nothing was deleted.", "confirm", nil, confirm)
		return
	}
	if err := s.providers.Delete(c.Request.Context(), v.KeyRequest(), id); err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Redirect(c, Base+"/identity-providers?deleted=1")
}
