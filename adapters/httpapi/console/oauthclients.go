package console

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/domain"
)

// The OAuth clients section: the applications that sign users in through
// Gatehouse's OpenID provider, through the use cases the admin API calls
// (oidc.OAuthClients: List, Get, Register, Update, RotateSecret, Delete).

const oauthClientsPath = Base + "/oauth-clients"

// maxURIsField bounds a textarea of URIs (20 URIs of 2048 characters, and
// their line ends), the use case's own bounds.
const maxURIsField = 20 * 2050

// OAuthClientsDeps are the OAuth clients section's use cases
// (oauthclients.go).
type OAuthClientsDeps struct {
	OAuthClients *oidc.OAuthClients
}

// oauthClientsSection is the OAuth clients section.
type oauthClientsSection struct {
	*base
	oauthClients *oidc.OAuthClients
}

// addOAuthClientRoutes registers the OAuth clients section.
func (s *oauthClientsSection) addOAuthClientRoutes(r shell.Section) {
	r.Get(oauthClientsPath, s.oauthClientsPage)
	r.Get(oauthClientsPath+"/:id", s.oauthClientPage)
	r.Post(oauthClientsPath, s.registerOAuthClient)
	r.Post(oauthClientsPath+"/:id/update", s.updateOAuthClient)
	r.Post(oauthClientsPath+"/:id/rotate-secret", s.rotateOAuthClientSecret)
	r.Post(oauthClientsPath+"/:id/delete", s.deleteOAuthClient)
}

// oauthClientForm is what a client form sent, shown again when refused.
// The URIs are bounded by maxURIsField, the use case checks the rest.
type oauthClientForm struct {
	Name         string `form:"name"`
	Type         string `form:"type"`
	RedirectURIs string `form:"redirectUris" validate:"maxbytes=41000"`
	LogoutURIs   string `form:"postLogoutRedirectUris" validate:"maxbytes=41000"`
	Confirm      string `form:"confirm"`
	FirstParty   bool   `form:"firstParty"`
}

// oauthClientFormErrors say what a part of a client form too big for the
// use case to look at should be, by its name.
var oauthClientFormErrors = map[string]string{
	"redirectUris":           "The redirect URIs are too long: at most 20, of at most 2048 characters each.",
	"postLogoutRedirectUris": "The post-logout redirect URIs are too long: at most 20, of at most 2048 characters each.",
}

// bindOAuthClientForm binds a client form, and says what is wrong with it
// and in which field ("" when nothing is).
func bindOAuthClientForm(c *gin.Context) (f oauthClientForm, msg, field string) {
	if bad, invalid := shell.BindForm(c, &f).First(); invalid {
		return f, oauthClientFormErrors[bad.Name], bad.Name
	}
	return f, "", ""
}

// kept is f bounded for showing again: a huge value is dropped.
func (f oauthClientForm) kept() oauthClientForm {
	f.Name, f.Type, f.Confirm = keep(f.Name, 1024), keep(f.Type, 32), keep(f.Confirm, 1024)
	f.RedirectURIs, f.LogoutURIs = keep(f.RedirectURIs, maxURIsField), keep(f.LogoutURIs, maxURIsField)
	return f
}

// lines splits a textarea into its non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// oauthClientLabels name the use case's fields as the forms do.
var oauthClientLabels = map[string]string{"name": "The name", "type": "The type", "redirectUris": "A redirect URI",
	"postLogoutRedirectUris": "A post-logout redirect URI"}

// oauthClientRow is a client as administrators see it: never its secret.
type oauthClientRow struct {
	ID, Name, Type, SecretLast4, Path string
	RedirectURIs, LogoutURIs          []string
	FirstParty                        bool
	Created, Updated                  time.Time
}

func oauthClientRowOf(c domain.OAuthClient) oauthClientRow {
	return oauthClientRow{ID: string(c.ID), Name: c.Name, Type: string(c.Type), SecretLast4: c.SecretLast4, Path: oauthClientsPath + "/" + url.PathEscape(string(c.ID)),
		RedirectURIs: c.RedirectURIs, LogoutURIs: c.PostLogoutRedirectURIs, FirstParty: c.FirstParty, Created: c.CreatedAt, Updated: c.UpdatedAt}
}

// oauthClientsView is the list and the registration form.
type oauthClientsView struct {
	Rows  []oauthClientRow
	Pager pager
	Form  oauthClientForm
}

// oauthClientsPage lists the clients, paged, the state in the URL.
func (s *oauthClientsSection) oauthClientsPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	s.showOAuthClients(c, v, http.StatusOK, "", "", oauthClientForm{Type: "confidential"}, c.Request.URL.Query())
}

// oauthClientDeleted is what the list says when a deletion landed on it.
const oauthClientDeleted = "The client is deleted, with its codes, grants and consents."

// rows fills ov with the page of clients lq asks for, and its links; it
// reports false when the cursor names no client.
func (ov *oauthClientsView) rows(clients []domain.OAuthClient, lq listQuery) bool {
	page, next, ok := pageAfter(clients, func(c domain.OAuthClient) string { return string(c.ID) }, lq)
	if !ok {
		return false
	}
	for _, cl := range page {
		ov.Rows = append(ov.Rows, oauthClientRowOf(cl))
	}
	ov.Pager = links(oauthClientsPath, url.Values{}, lq, next)
	return true
}

// showOAuthClients renders the list with status, a refused form's error,
// field and input, and the list's state q.
func (s *oauthClientsSection) showOAuthClients(c *gin.Context, v *shell.Visit, status int, msg, field string, f oauthClientForm, q url.Values) {
	ov := &oauthClientsView{Form: f}
	p := sectionPage(v, "OAuth clients", "oauth-clients", deletedNotice(q, oauthClientDeleted))
	p.Error, p.Field = msg, field
	lq, bad, badField := readListQuery(q)
	if bad != "" {
		refused(c, s.pages.oauthClients, p, bad, badField, ov)
		return
	}
	clients, err := s.oauthClients.List(c.Request.Context(), v.KeyRequest())
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	if !ov.rows(clients, lq) {
		refused(c, s.pages.oauthClients, p, badPageLink, "cursor", ov)
		return
	}
	s.pages.oauthClients.Render(c, status, p, ov)
}

// registerOAuthClient registers through OAuthClients.Register; a
// confidential client's secret is shown this once.
func (s *oauthClientsSection) registerOAuthClient(c *gin.Context, v *shell.Visit) {
	f, msg, field := bindOAuthClientForm(c)
	if msg != "" {
		s.showOAuthClients(c, v, http.StatusBadRequest, msg, field, f.kept(), url.Values{})
		return
	}
	issued, err := s.oauthClients.Register(c.Request.Context(), v.KeyRequest(), oidc.RegisterOAuthClient{Name: f.Name, Type: f.Type,
		RedirectURIs: lines(f.RedirectURIs), PostLogoutRedirectURIs: lines(f.LogoutURIs), FirstParty: f.FirstParty})
	if err != nil {
		if msg, field, ok := invalidField(err, oauthClientLabels); ok {
			s.showOAuthClients(c, v, http.StatusBadRequest, msg, field, f.kept(), url.Values{})
			return
		}
		s.shell.Refuse(c, err)
		return
	}
	path := oauthClientsPath + "/" + url.PathEscape(string(issued.Client.ID))
	if issued.Secret == "" {
		shell.Done(c, path, "registered")
		return
	}
	s.showSecret(c, v, "oauth-clients", "OAuth client registered", &secretView{What: "client secret", Name: issued.Client.Name,
		ClientID: string(issued.Client.ID), Secret: issued.Secret, Back: path})
}

// oauthClientView is a client's page with its forms.
type oauthClientView struct {
	oauthClientRow
	Form oauthClientForm
}

// oauthClientPage shows a client (OAuthClients.Get).
func (s *oauthClientsSection) oauthClientPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	s.showOAuthClient(c, v, http.StatusOK, "", "", nil)
}

// showOAuthClient renders a client's page; f, when not nil, is a refused
// form's input, else the form shows the client as it is.
func (s *oauthClientsSection) showOAuthClient(c *gin.Context, v *shell.Visit, status int, msg, field string, f *oauthClientForm) {
	id := c.Param("id")
	if len(id) > maxID {
		s.shell.Refusal(c, http.StatusBadRequest, "Bad request", "The client id is too long.", edge.FieldError{Location: "path.id", Message: "is too long"})
		return
	}
	cl, err := s.oauthClients.Get(c.Request.Context(), v.KeyRequest(), domain.OAuthClientID(id))
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	cv := &oauthClientView{oauthClientRow: oauthClientRowOf(cl)}
	if f != nil {
		cv.Form = *f
	} else {
		cv.Form = oauthClientForm{Name: cl.Name, RedirectURIs: strings.Join(cl.RedirectURIs, "\n"), LogoutURIs: strings.Join(cl.PostLogoutRedirectURIs, "\n"),
			FirstParty: cl.FirstParty}
	}
	p := v.Page(cl.Name)
	p.Section, p.Error, p.Field = "oauth-clients", msg, field
	p.Notice = keyNotices.Of(c)
	s.pages.oauthClient.Render(c, status, p, cv)
}

// updateOAuthClient saves the name, redirect URIs and first-party flag
// through OAuthClients.Update.
func (s *oauthClientsSection) updateOAuthClient(c *gin.Context, v *shell.Visit) {
	f, msg, field := bindOAuthClientForm(c)
	f.Confirm = ""
	if msg != "" {
		kept := f.kept()
		s.showOAuthClient(c, v, http.StatusBadRequest, msg, field, &kept)
		return
	}
	uris, logout := lines(f.RedirectURIs), lines(f.LogoutURIs)
	if logout == nil {
		logout = []string{}
	}
	_, err := s.oauthClients.Update(c.Request.Context(), v.KeyRequest(), domain.OAuthClientID(c.Param("id")),
		oidc.UpdateOAuthClient{Name: &f.Name, RedirectURIs: &uris, PostLogoutRedirectURIs: &logout, FirstParty: &f.FirstParty})
	if err != nil {
		if msg, field, ok := invalidField(err, oauthClientLabels); ok {
			kept := f.kept()
			s.showOAuthClient(c, v, http.StatusBadRequest, msg, field, &kept)
			return
		}
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, oauthClientsPath+"/"+url.PathEscape(c.Param("id")), "updated")
}

// rotateOAuthClientSecret gives a confidential client a new secret through
// OAuthClients.RotateSecret and shows it once.
func (s *oauthClientsSection) rotateOAuthClientSecret(c *gin.Context, v *shell.Visit) {
	issued, err := s.oauthClients.RotateSecret(c.Request.Context(), v.KeyRequest(), domain.OAuthClientID(c.Param("id")))
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	s.showSecret(c, v, "oauth-clients", "Client secret rotated", &secretView{What: "new client secret", Name: issued.Client.Name,
		ClientID: string(issued.Client.ID), Secret: issued.Secret, Note: "The old secret stopped working now.",
		Back: oauthClientsPath + "/" + url.PathEscape(string(issued.Client.ID))})
}

// deleteOAuthClient deletes through OAuthClients.Delete once the typed
// confirmation is the client's name.
func (s *oauthClientsSection) deleteOAuthClient(c *gin.Context, v *shell.Visit) {
	ctx := c.Request.Context()
	id := domain.OAuthClientID(c.Param("id"))
	cl, err := s.oauthClients.Get(ctx, v.KeyRequest(), id)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	confirm := confirmation(c)
	if confirm != cl.Name {
		f := oauthClientForm{Name: cl.Name, RedirectURIs: strings.Join(cl.RedirectURIs, "\n"), LogoutURIs: strings.Join(cl.PostLogoutRedirectURIs, "\n"),
			FirstParty: cl.FirstParty, Confirm: keep(confirm, 1024)}
		s.showOAuthClient(c, v, http.StatusBadRequest, "Type the client's name exactly to confirm. Nothing was deleted.", "confirm", &f)
		return
	}
	if err := s.oauthClients.Delete(ctx, v.KeyRequest(), id); err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Redirect(c, oauthClientsPath+"?deleted=1")
}
