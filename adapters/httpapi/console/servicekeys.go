package console

import (
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/application/servicekey"
	"github.com/gatehouse/gatehouse/domain"
)

// The Service keys section: the keys of trusted backends, through the use
// cases the admin API calls (servicekey.ServiceKeys: List, Create, Rotate,
// Revoke), so the same checks (administrators only, step-up before a
// secret is handed out) and audit entries apply.

const serviceKeysPath = Base + "/service-keys"

// ServiceKeysDeps are the Service keys section's use cases
// (servicekeys.go).
type ServiceKeysDeps struct {
	ServiceKeys *servicekey.ServiceKeys
}

// serviceKeysSection is the Service keys section.
type serviceKeysSection struct {
	*base
	serviceKeys *servicekey.ServiceKeys
}

// addServiceKeyRoutes registers the Service keys section.
func (s *serviceKeysSection) addServiceKeyRoutes(r shell.Section) {
	r.Get(serviceKeysPath, s.serviceKeysPage)
	r.Get(serviceKeysPath+"/:id", s.serviceKeyPage)
	r.Post(serviceKeysPath, s.createServiceKey)
	r.Post(serviceKeysPath+"/:id/rotate", s.rotateServiceKey)
	r.Post(serviceKeysPath+"/:id/revoke", s.revokeServiceKey)
}

// serviceKeysView is the list of keys and the form that creates one.
type serviceKeysView struct {
	Status, Limit string
	Rows          []serviceKeyRow
	Pager         pager
	Scopes        []string
	Form          serviceKeyForm
}

// serviceKeyForm is what a refused create form sent, shown again.
type serviceKeyForm struct {
	Name, Days string
	Scopes     []string
}

// Has reports whether the form had scope checked.
func (f serviceKeyForm) Has(scope string) bool { return slices.Contains(f.Scopes, scope) }

// serviceKeyRow is one key, as administrators see it: never its secret.
type serviceKeyRow struct {
	ID, Name, Masked, Status, CreatedBy, Path string
	Scopes                                    []string
	Created, Expires, LastUsed, Revoked       time.Time
}

func serviceKeyRowOf(k *domain.ServiceKey, now time.Time) serviceKeyRow {
	r := serviceKeyRow{ID: string(k.ID()), Name: k.Name(), Masked: k.Masked(), CreatedBy: k.CreatedBy(), Path: serviceKeysPath + "/" + url.PathEscape(string(k.ID())),
		Created: k.CreatedAt(), Expires: k.ExpiresAt(), LastUsed: k.LastUsedAt(), Revoked: k.RevokedAt(), Status: "active"}
	for _, sc := range k.Scopes() {
		r.Scopes = append(r.Scopes, string(sc))
	}
	switch {
	case !r.Revoked.IsZero():
		r.Status = "revoked"
	case !r.Expires.IsZero() && !now.Before(r.Expires):
		r.Status = "expired"
	}
	return r
}

// serviceKeyLabels name the use case's fields as the form does.
var serviceKeyLabels = map[string]string{"name": "The name", "scopes": "The scopes", "expiresAt": "The expiry"}

// knownScopes are the scopes the create form offers.
func knownScopes() []string {
	out := make([]string, len(domain.Scopes))
	for i, sc := range domain.Scopes {
		out[i] = string(sc)
	}
	return out
}

// serviceKeysPage lists the keys, filtered by status and paged, all in the URL.
func (s *serviceKeysSection) serviceKeysPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	s.showServiceKeys(c, v, http.StatusOK, "", "", serviceKeyForm{}, c.Request.URL.Query())
}

// serviceKeysQuery is the list's filter (its paging is listParams'), and
// what a revocation landing on it says.
type serviceKeysQuery struct {
	Status  string `query:"status" validate:"omitempty,oneof=active expired revoked"`
	Revoked string `query:"revoked"`
}

// bindServiceKeysQuery binds the list's state q: its paging, its filter,
// and what is wrong with them, in which field ("" when nothing is; the
// paging is named first).
func bindServiceKeysQuery(q url.Values) (lq listQuery, kq serviceKeysQuery, msg, field string) {
	lq, msg, field = readListQuery(q)
	if _, invalid := shell.BindQueryValues(q, &kq).First(); invalid && msg == "" {
		msg, field = "The status is active, expired, revoked, or any.", "status"
	}
	return lq, kq, msg, field
}

// notice is what the list says when a revocation landed on it.
func (kq serviceKeysQuery) notice() string {
	if kq.Revoked == "" {
		return ""
	}
	return "The key is revoked."
}

// rows fills sv with the page of keys (those of its status) lq asks for,
// and its links; it reports false when the cursor names no key.
func (sv *serviceKeysView) rows(keys []*domain.ServiceKey, now time.Time, lq listQuery) bool {
	var rows []serviceKeyRow
	for _, k := range keys {
		if r := serviceKeyRowOf(k, now); sv.Status == "" || r.Status == sv.Status {
			rows = append(rows, r)
		}
	}
	page, next, ok := pageAfter(rows, func(r serviceKeyRow) string { return r.ID }, lq)
	if !ok {
		return false
	}
	sv.Rows, sv.Pager = page, links(serviceKeysPath, url.Values{"status": {sv.Status}}, lq, next)
	return true
}

// showServiceKeys renders the list with status, a refused form's error,
// field and input, and the list's state q.
func (s *serviceKeysSection) showServiceKeys(c *gin.Context, v *shell.Visit, status int, msg, field string, f serviceKeyForm, q url.Values) {
	lq, kq, bad, badField := bindServiceKeysQuery(q)
	sv := &serviceKeysView{Status: kq.Status, Limit: q.Get("limit"), Scopes: knownScopes(), Form: f}
	p := sectionPage(v, "Service keys", "service-keys", kq.notice())
	p.Error, p.Field = msg, field
	if bad != "" {
		refused(c, s.pages.serviceKeys, p, bad, badField, sv)
		return
	}
	keys, err := s.serviceKeys.List(c.Request.Context(), v.KeyRequest())
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	if !sv.rows(keys, v.Now, lq) {
		refused(c, s.pages.serviceKeys, p, badPageLink, "cursor", sv)
		return
	}
	s.pages.serviceKeys.Render(c, status, p, sv)
}

// newServiceKeyForm is the create form: the name (the use case checks
// it), the scopes (at least one, and no more than there are:
// len(domain.Scopes); which they are is the use case's rule) and for how
// many days the key works (empty: until revoked).
type newServiceKeyForm struct {
	Name   string   `form:"name"`
	Scopes []string `form:"scopes" validate:"required,max=9"`
	Days   *int     `form:"days,trim" validate:"omitempty,min=1,max=3650"`
	// DaysTyped is the days as typed, shown again when refused.
	DaysTyped string `form:"days,trim"`
}

// newServiceKeyErrors say what a malformed part of the create form should
// be, by its name.
var newServiceKeyErrors = map[string]string{
	"scopes": "Choose at least one scope.",
	"days":   "Days must be a whole number from 1 to 3650, or empty for a key that does not expire.",
}

// refusal says what the form's part name should be.
func (kf newServiceKeyForm) refusal(name string) string {
	if name == "scopes" && len(kf.Scopes) > 0 {
		return "The scopes are the ones listed, each at most once."
	}
	return newServiceKeyErrors[name]
}

// command is the use case's command for the form, at now.
func (kf newServiceKeyForm) command(now time.Time) servicekey.CreateServiceKey {
	cmd := servicekey.CreateServiceKey{Name: kf.Name, Scopes: kf.Scopes}
	if kf.Days != nil {
		cmd.ExpiresAt = now.Add(time.Duration(*kf.Days) * 24 * time.Hour).UTC()
	}
	return cmd
}

// shown is the refused form as shown again: what is too big to be worth
// it is dropped.
func (kf newServiceKeyForm) shown() serviceKeyForm {
	f := serviceKeyForm{Name: keep(kf.Name, 1024), Days: keep(kf.DaysTyped, 16), Scopes: kf.Scopes}
	if len(f.Scopes) > len(domain.Scopes) {
		f.Scopes = nil
	}
	return f
}

// createServiceKey issues a key through ServiceKeys.Create and answers
// with its secret, shown this once.
func (s *serviceKeysSection) createServiceKey(c *gin.Context, v *shell.Visit) {
	var kf newServiceKeyForm
	if bad, invalid := shell.BindForm(c, &kf).First(); invalid {
		s.showServiceKeys(c, v, http.StatusBadRequest, kf.refusal(bad.Name), bad.Name, kf.shown(), url.Values{})
		return
	}
	k, err := s.serviceKeys.Create(c.Request.Context(), v.KeyRequest(), kf.command(v.Now))
	if msg, field, ok := invalidField(err, serviceKeyLabels); ok {
		if field == "expiresAt" {
			field = "days"
		}
		s.showServiceKeys(c, v, http.StatusBadRequest, msg, field, kf.shown(), url.Values{})
		return
	}
	if err != nil {
		s.shell.Refuse(c, err) // a step-up refusal: the hosted step-up page, and back to this form's page
		return
	}
	s.showSecret(c, v, "service-keys", "Service key created", &secretView{What: "service key", Name: k.Key.Name(), Secret: k.Secret,
		Back: serviceKeysPath + "/" + url.PathEscape(string(k.Key.ID()))})
}

// serviceKeyView is one key's page, with its rotate and revoke forms.
type serviceKeyView struct {
	serviceKeyRow
	Overlap string
}

// overlaps are the choices of how long a rotated-out secret keeps working.
var overlaps = map[string]time.Duration{"0": 0, "1h": time.Hour, "24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": servicekey.MaxRotationOverlap}

// serviceKeyPage shows a key (found in ServiceKeys.List, as the admin API lists it).
func (s *serviceKeysSection) serviceKeyPage(c *gin.Context) {
	v, ok := s.view(c)
	if !ok {
		return
	}
	s.showServiceKey(c, v, http.StatusOK, "", "", "")
}

func (s *serviceKeysSection) showServiceKey(c *gin.Context, v *shell.Visit, status int, msg, field, overlap string) {
	id := c.Param("id")
	if len(id) > maxID {
		s.shell.Refusal(c, http.StatusBadRequest, "Bad request", "The key id is too long.")
		return
	}
	keys, err := s.serviceKeys.List(c.Request.Context(), v.KeyRequest())
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	i := slices.IndexFunc(keys, func(k *domain.ServiceKey) bool { return string(k.ID()) == id })
	if i < 0 {
		s.shell.Refusal(c, http.StatusNotFound, "Not found", "There is no service key with this id.")
		return
	}
	kv := &serviceKeyView{serviceKeyRow: serviceKeyRowOf(keys[i], v.Now), Overlap: overlap}
	p := v.Page(kv.Name)
	p.Section, p.Error, p.Field = "service-keys", msg, field
	p.Notice = keyNotices.Of(c)
	s.pages.serviceKey.Render(c, status, p, kv)
}

// rotateKeyForm is the rotate form: how long the old secret keeps
// working, one of overlaps' keys.
type rotateKeyForm struct {
	Overlap string `form:"overlap" validate:"oneof=0 1h 24h 7d 30d"`
}

// rotateServiceKey issues a new secret through ServiceKeys.Rotate, the old
// one working for the chosen overlap, and shows the new one once.
func (s *serviceKeysSection) rotateServiceKey(c *gin.Context, v *shell.Visit) {
	var rf rotateKeyForm
	if _, invalid := shell.BindForm(c, &rf).First(); invalid {
		s.showServiceKey(c, v, http.StatusBadRequest, "Choose how long the old secret keeps working.", "overlap", "")
		return
	}
	overlap := overlaps[rf.Overlap]
	k, err := s.serviceKeys.Rotate(c.Request.Context(), v.KeyRequest(), domain.ServiceKeyID(c.Param("id")), overlap)
	if err != nil {
		s.shell.Refuse(c, err) // a step-up refusal: the hosted step-up page, and back to the key's page
		return
	}
	note := "The old secret stopped working now."
	if overlap > 0 {
		note = "The old secret keeps working until " + v.Now.Add(overlap).UTC().Format("2006-01-02 15:04 UTC") + ": switch your deployments over before then."
	}
	path := serviceKeysPath + "/" + url.PathEscape(string(k.Key.ID()))
	s.showSecret(c, v, "service-keys", "Service key rotated", &secretView{What: "new secret", Name: k.Key.Name(), Secret: k.Secret, Note: note, Back: path})
}

// revokeServiceKey ends a key and all its secrets through ServiceKeys.Revoke.
func (s *serviceKeysSection) revokeServiceKey(c *gin.Context, v *shell.Visit) {
	if err := s.serviceKeys.Revoke(c.Request.Context(), v.KeyRequest(), domain.ServiceKeyID(c.Param("id"))); err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, serviceKeysPath+"/"+url.PathEscape(c.Param("id")), "revoked")
}
