package console

import (
	"embed"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
)

// pages are the console's pages, each typed by its view: a page renders
// with its own view and no other (shell.Template).
type pages struct {
	overview      *shell.Template[*overviewView]
	users         *shell.Template[*usersView]
	user          *shell.Template[*userView]
	impersonating *shell.Template[struct{}] // the page an impersonation sees: the layout's banner only
	organizations *shell.Template[*organizationsView]
	organization  *shell.Template[*organizationView]
	domains       *shell.Template[*domainsView]
	domain        *shell.Template[*domainView]
	serviceKeys   *shell.Template[*serviceKeysView]
	serviceKey    *shell.Template[*serviceKeyView]
	oauthClients  *shell.Template[*oauthClientsView]
	oauthClient   *shell.Template[*oauthClientView]
	signingKeys   *shell.Template[*signingKeysView]
	providers     *shell.Template[*idpView] // the list, and one provider's page
	webhooks      *shell.Template[*webhooksView]
	webhook       *shell.Template[*webhookView]
	secret        *shell.Template[*secretView]
	audit         *shell.Template[*auditView]
}

// newPages types each of views' pages; a page left untyped panics.
func newPages(views *shell.Views) pages {
	p := pages{
		overview:      shell.NewTemplate[*overviewView](views, "overview"),
		users:         shell.NewTemplate[*usersView](views, "users"),
		user:          shell.NewTemplate[*userView](views, "user"),
		impersonating: shell.NewTemplate[struct{}](views, "impersonating"),
		organizations: shell.NewTemplate[*organizationsView](views, "organizations"),
		organization:  shell.NewTemplate[*organizationView](views, "organization"),
		domains:       shell.NewTemplate[*domainsView](views, "domains"),
		domain:        shell.NewTemplate[*domainView](views, "domain"),
		serviceKeys:   shell.NewTemplate[*serviceKeysView](views, "servicekeys"),
		serviceKey:    shell.NewTemplate[*serviceKeyView](views, "servicekey"),
		oauthClients:  shell.NewTemplate[*oauthClientsView](views, "oauthclients"),
		oauthClient:   shell.NewTemplate[*oauthClientView](views, "oauthclient"),
		signingKeys:   shell.NewTemplate[*signingKeysView](views, "signingkeys"),
		providers:     shell.NewTemplate[*idpView](views, "identityproviders"),
		webhooks:      shell.NewTemplate[*webhooksView](views, "webhooks"),
		webhook:       shell.NewTemplate[*webhookView](views, "webhook"),
		secret:        shell.NewTemplate[*secretView](views, "secret"),
		audit:         shell.NewTemplate[*auditView](views, "audit"),
	}
	views.MustBeTyped()
	return p
}

// badPageLink is a list page's error when the use case refuses its cursor.
const badPageLink = "The page link is not valid: start from the first page."

// sectionPage is a page of section titled title, saying notice.
func sectionPage(v *shell.Visit, title, section, notice string) *shell.Page {
	p := v.Page(title)
	p.Section, p.Notice = section, notice
	return p
}

// refused renders page t with status 400, p saying msg of field: a page
// whose query or cursor is refused, showing view.
func refused[V any](c *gin.Context, t *shell.Template[V], p *shell.Page, msg, field string, view V) {
	p.Error, p.Field = msg, field
	t.Render(c, http.StatusBadRequest, p, view)
}

// pageLinks are the links of a list at path filtered as link says: to the
// first page (when on a later one, after cursor) and to the next (when
// there is one, after next).
func pageLinks(path string, link url.Values, cursor, next string) (first, nextURL string) {
	if cursor != "" {
		first = edge.PageURL(path, link)
	}
	if next != "" {
		link.Set("cursor", next)
		nextURL = edge.PageURL(path, link)
	}
	return first, nextURL
}

// The console's pages: templates/*.html, each inside the shell's layout.
//
//go:embed templates/*.html
var files embed.FS
