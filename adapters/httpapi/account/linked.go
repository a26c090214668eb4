package account

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// The linked accounts page (/account/linked): the signed-in user's
// accounts at identity providers, through the framework's own use cases
// (federation.Accounts, what list-accounts and unlink-account call, and
// federation.SignIns.Start with Link, what link-social calls). Linking goes
// through the provider and comes back here; the last way to sign in is
// never unlinked (the use case refuses it).

const (
	linkedPath = AccountBase + "/linked"
	linkPath   = linkedPath + "/link"
	unlinkPath = linkedPath + "/unlink"
)

// linkedView is the linked accounts page.
type linkedView struct {
	Password  bool
	Accounts  []linkedAccountRow
	Providers []providerChoice
	// SignIn signs in again and comes back (a session too old to unlink).
	SignIn string
}

// linkedAccountRow is one of the user's linked accounts.
type linkedAccountRow struct {
	ID, Provider, Email string
	Created             time.Time
}

// providerChoice is a provider the user may link.
type providerChoice struct{ ID, Name string }

// LinkedDeps are the linked accounts page's use cases (linked.go).
type LinkedDeps struct {
	LinkedAccounts    *federation.Accounts  // the linked accounts
	Federation        *federation.SignIns   // linking one more
	IdentityProviders *federation.Providers // the providers one may link
}

// linkedSection is the linked accounts page and its forms.
type linkedSection struct {
	*base
	linked    *federation.Accounts
	signIns   *federation.SignIns
	providers *federation.Providers
}

// addLinkedRoutes registers the linked accounts page and its forms.
func (s *linkedSection) addLinkedRoutes(r shell.Section) {
	r.Get(linkedPath, s.linkedPage)
	r.Post(linkPath, s.linkProvider)
	r.Post(unlinkPath, s.unlinkOwnAccount)
}

// linkedNotices say what a linked-accounts form did (?done=).
var linkedNotices = shell.Notices{
	"linked":   "The account is linked: you can sign in with it.",
	"unlinked": "The account is unlinked: it no longer signs you in.",
}

// linkErrors say why a link came back refused (?error=, the framework's
// callback codes).
var linkErrors = map[string]string{
	"email_does_not_match":                     "The provider's account has another e-mail address than yours: it was not linked.",
	"account_already_linked_to_different_user": "That account at the provider is linked to another user already.",
	"email_not_verified":                       "The provider does not say the address is verified: the account was not linked.",
	"unable_to_link_account":                   "The account could not be linked.",
	"access_denied":                            "The provider did not allow the link.",
	"state_not_found":                          "The link took too long or was started in another browser: try again.",
	"state_mismatch":                           "The link took too long or was started in another browser: try again.",
}

// linkedQuery is the linked accounts page's query: the error a link that
// failed at the provider came back with.
type linkedQuery struct {
	Error string `query:"error"`
}

// linkedPage shows the user's linked accounts and the providers to link.
func (s *linkedSection) linkedPage(c *gin.Context) {
	v, ok := s.enter(c)
	if !ok {
		return
	}
	var lq linkedQuery
	shell.BindQuery(c, &lq) // no rule to break
	msg := ""
	if code := lq.Error; code != "" {
		if msg = linkErrors[code]; msg == "" {
			msg = "The provider's sign-in did not end well: the account was not linked."
		}
	}
	s.showLinked(c, v, http.StatusOK, msg, "", linkedNotices.Of(c))
}

// showLinked renders the linked accounts page with status, a refused
// form's message and field, and a notice.
func (s *linkedSection) showLinked(c *gin.Context, v *shell.Visit, status int, msg, field, notice string) {
	ctx := c.Request.Context()
	accounts, err := s.linked.List(ctx, v.P.User.ID())
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	enabled, err := s.providers.Enabled(ctx)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	lv, unlinked := linkedViewOf(accounts, enabled)
	p := accountPage(v, "Linked accounts", "linked")
	for _, pr := range unlinked {
		// The link form ends at the provider: form-action must allow it.
		if o := originOf(s.signIns.AuthorizationEndpoint(ctx, pr)); o != "" {
			p.FormTargets = append(p.FormTargets, o)
		}
	}
	p.Error, p.Field, p.Notice = msg, field, notice
	s.pages.linked.Render(c, status, p, lv)
}

// linkedViewOf is the linked accounts page: the user's accounts (named by
// their enabled provider) and the enabled providers not linked yet, which
// it returns too.
func linkedViewOf(accounts []federation.AccountView, enabled []domain.IdentityProvider) (lv *linkedView, unlinked []domain.IdentityProvider) {
	names := map[string]string{}
	for _, pr := range enabled {
		names[string(pr.ID)] = pr.Name
	}
	lv = &linkedView{SignIn: edge.PageURL("/sign-in", url.Values{"callbackURL": {linkedPath}})}
	linked := map[string]bool{}
	for _, a := range accounts {
		if a.ProviderID == domain.CredentialProviderID {
			lv.Password = true
			continue
		}
		linked[a.ProviderID] = true
		name := names[a.ProviderID]
		if name == "" {
			name = a.ProviderID
		}
		lv.Accounts = append(lv.Accounts, linkedAccountRow{ID: a.ID, Provider: name, Email: a.Email, Created: a.CreatedAt})
	}
	for _, pr := range enabled {
		if !linked[string(pr.ID)] {
			lv.Providers = append(lv.Providers, providerChoice{ID: string(pr.ID), Name: pr.Name})
			unlinked = append(unlinked, pr)
		}
	}
	return lv, unlinked
}

// originOf is the origin of an absolute http(s) URL, or "".
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// The linked accounts page's forms: the provider to link, the account to
// unlink, bounded as the framework bounds link-social's provider and
// unlink-account's accountId.
type (
	providerForm struct {
		Provider string `form:"provider" validate:"required,maxbytes=64"`
	}
	accountForm struct {
		Account string `form:"account" validate:"required,maxbytes=128"`
	}
)

// linkProvider starts linking an account at a provider
// (federation.SignIns.Start with Link, as /api/auth/link-social): the
// browser goes to the provider with the state cookie and comes back here.
func (s *linkedSection) linkProvider(c *gin.Context, v *shell.Visit) {
	ctx := c.Request.Context()
	var pf providerForm
	if _, invalid := shell.BindForm(c, &pf).First(); invalid {
		s.showLinked(c, v, http.StatusBadRequest, "Choose a provider to link.", "provider", "")
		return
	}
	st, err := s.signIns.Start(ctx, federation.Start{Provider: pf.Provider, CallbackURL: shell.DoneURL(linkedPath, "linked"),
		ErrorURL: linkedPath, Link: &v.P})
	if err != nil {
		if domain.KindOf(err) == domain.KindNotFound || domain.KindOf(err) == domain.KindInvalid {
			s.showLinked(c, v, http.StatusBadRequest, "That provider is not available: nothing was linked.", "provider", "")
			return
		}
		s.shell.Refuse(c, err)
		return
	}
	ck := s.Cookies.OAuthStateCookie(st.State, domain.FederationStateTTL)
	http.SetCookie(c.Writer, &ck)
	edge.Redirect(c, http.StatusSeeOther, st.URL)
}

// unlinkOwnAccount unlinks one of the user's accounts (federation.Accounts.Unlink,
// as /api/auth/unlink-account): refused for a session too old, and for the
// last way to sign in.
func (s *linkedSection) unlinkOwnAccount(c *gin.Context, v *shell.Visit) {
	var af accountForm
	if _, invalid := shell.BindForm(c, &af).First(); invalid {
		s.showLinked(c, v, http.StatusBadRequest, "Choose an account to unlink.", "account", "")
		return
	}
	err := s.linked.Unlink(c.Request.Context(), v.P, edge.Origin(c.Request.Context()), af.Account)
	switch {
	case err == nil:
		shell.Done(c, linkedPath, "unlinked")
	case errors.Is(err, federation.ErrCannotUnlinkLast):
		s.showLinked(c, v, http.StatusBadRequest,
			"This is your last way to sign in: add a password or a passkey, or link another account, before unlinking it. Nothing was changed.", "account", "")
	case errors.Is(err, usecase.ErrSessionNotFresh):
		s.showLinked(c, v, http.StatusForbidden, "You signed in a while ago: sign in again, then unlink the account. Nothing was changed.", "account", "")
	case errors.Is(err, federation.ErrAccountNotFound), errors.Is(err, federation.ErrCredentialAccount):
		s.showLinked(c, v, http.StatusNotFound, "You have no such linked account: nothing was changed.", "account", "")
	default:
		s.shell.Refuse(c, err)
	}
}
