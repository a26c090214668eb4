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

// SigningKeysDeps are the Signing keys section's use cases
// (signingkeys.go).
type SigningKeysDeps struct {
	SigningKeys *oidc.SigningKeys
}

// signingKeysSection is the Signing keys section.
type signingKeysSection struct {
	*base
	signingKeys *oidc.SigningKeys
}

// addSigningKeyRoutes registers the Signing keys section.
func (s *signingKeysSection) addSigningKeyRoutes(r shell.Section) {
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
func (s *signingKeysSection) signingKeysPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	s.showSigningKeys(c, v, http.StatusOK, "", "", "", false)
}

// signingKeysViewOf is the list's view, with the rotate form's algorithm
// and choice (the rows come with rows).
func signingKeysViewOf(alg string, immediate bool) *signingKeysView {
	kv := &signingKeysView{Alg: alg, Immediate: immediate}
	for _, a := range domain.SigningAlgorithms {
		kv.Algs = append(kv.Algs, string(a))
	}
	return kv
}

// rows fills kv with the page of keys lq asks for, and its links; it
// reports false when the cursor names no key.
func (kv *signingKeysView) rows(keys []oidc.SigningKeyView, lq listQuery) bool {
	page, next, ok := pageAfter(keys, func(k oidc.SigningKeyView) string { return string(k.ID) }, lq)
	if !ok {
		return false
	}
	for _, k := range page {
		kv.Rows = append(kv.Rows, signingKeyRow{ID: string(k.ID), Alg: string(k.Alg), Status: k.Status, Created: k.CreatedAt, Activates: k.ActivatesAt,
			Retires: k.RetiredAt, Gone: k.PublishedUntil})
	}
	kv.Pager = links(signingKeysPath, url.Values{}, lq, next)
	return true
}

// showSigningKeys renders the list with status, and a refused rotate
// form's error, field and input.
func (s *signingKeysSection) showSigningKeys(c *gin.Context, v *shell.Visit, status int, msg, field, alg string, immediate bool) {
	kv := signingKeysViewOf(alg, immediate)
	p := sectionPage(v, "Signing keys", "signing-keys", keyNotices.Of(c))
	p.Error, p.Field = msg, field
	lq, bad, badField := readListQuery(c.Request.URL.Query())
	if bad != "" {
		refused(c, s.pages.signingKeys, p, bad, badField, kv)
		return
	}
	keys, err := s.signingKeys.List(c.Request.Context(), v.KeyRequest())
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	if !kv.rows(keys, lq) {
		refused(c, s.pages.signingKeys, p, badPageLink, "cursor", kv)
		return
	}
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
func (s *signingKeysSection) rotateSigningKeys(c *gin.Context, v *shell.Visit) {
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
