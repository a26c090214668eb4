package console

import (
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/application/oidc"
	"github.com/gatehouse/gatehouse/domain"
)

// The Signing keys section: the keys that sign ID and access tokens,
// through the use cases the admin API calls (oidc.SigningKeys: List,
// Rotate).

const signingKeysPath = Base + "/signing-keys"

// addSigningKeyRoutes registers the Signing keys section.
func (s *API) addSigningKeyRoutes(r shell.Section) {
	r.Get(signingKeysPath, s.signingKeysPage)
	r.Post(signingKeysPath+"/rotate", s.rotateSigningKeys)
}

// signingKeysView is the list of published keys and the rotate form.
type signingKeysView struct {
	Rows      []signingKeyRow
	Pager     pager
	Algs      []string
	Alg       string
	Immediate bool
}

type signingKeyRow struct {
	ID, Alg, Status                   string
	Created, Activates, Retires, Gone time.Time
}

// signingKeysPage lists the published keys, newest first, paged.
func (s *API) signingKeysPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	s.showSigningKeys(c, v, http.StatusOK, "", "", "", false)
}

func (s *API) showSigningKeys(c *gin.Context, v *shell.Visit, status int, msg, field, alg string, immediate bool) {
	kv := &signingKeysView{Alg: alg, Immediate: immediate}
	for _, a := range domain.SigningAlgorithms {
		kv.Algs = append(kv.Algs, string(a))
	}
	p := v.Page("Signing keys")
	p.Section, p.Error, p.Field = "signing-keys", msg, field
	p.Notice = keyNotices.Of(c)
	lq, bad, badField := readListQuery(c.Request.URL.Query())
	if bad != "" {
		p.Error, p.Field = bad, badField
		s.pages.signingKeys.Render(c, http.StatusBadRequest, p, kv)
		return
	}
	views, err := s.signingKeys.List(c.Request.Context(), v.KeyRequest())
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	page, next, ok := pageAfter(views, func(k oidc.SigningKeyView) string { return string(k.ID) }, lq)
	if !ok {
		p.Error, p.Field = "The page link is not valid: start from the first page.", "cursor"
		s.pages.signingKeys.Render(c, http.StatusBadRequest, p, kv)
		return
	}
	for _, k := range page {
		kv.Rows = append(kv.Rows, signingKeyRow{ID: string(k.ID), Alg: string(k.Alg), Status: k.Status, Created: k.CreatedAt, Activates: k.ActivatesAt,
			Retires: k.RetiredAt, Gone: k.PublishedUntil})
	}
	kv.Pager = links(signingKeysPath, url.Values{}, lq, next)
	s.pages.signingKeys.Render(c, status, p, kv)
}

// rotateKeysForm is the rotate form: the algorithm (empty: both; the use
// case knows which there are) and whether the new key signs now.
type rotateKeysForm struct {
	Alg       string `form:"alg"`
	Immediate bool   `form:"immediate"`
}

// command is the use case's command for the form.
func (rf rotateKeysForm) command() oidc.RotateSigningKeys {
	cmd := oidc.RotateSigningKeys{Immediate: rf.Immediate}
	if rf.Alg != "" {
		cmd.Algs = []domain.SigningAlgorithm{domain.SigningAlgorithm(rf.Alg)}
	}
	return cmd
}

// rotateSigningKeys makes new keys through SigningKeys.Rotate: for one
// algorithm or both, at the next activation or (a compromised key) now.
func (s *API) rotateSigningKeys(c *gin.Context, v *shell.Visit) {
	var rf rotateKeysForm
	shell.BindForm(c, &rf) // the use case checks the algorithm
	if _, err := s.signingKeys.Rotate(c.Request.Context(), v.KeyRequest(), rf.command()); err != nil {
		if msg, field, ok := invalidField(err, map[string]string{"alg": "The algorithm"}); ok {
			s.showSigningKeys(c, v, http.StatusBadRequest, msg, field, keep(rf.Alg, 16), rf.Immediate)
			return
		}
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, signingKeysPath, "rotated")
}
