package console

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/domain"
)

// tagParam is the parameter of rule name in the validate tag of form's field.
func tagParam(t *testing.T, form any, field, name string) string {
	t.Helper()
	f, ok := reflect.TypeOf(form).FieldByName(field)
	if !ok {
		t.Fatalf("%T has no field %s", form, field)
	}
	for _, r := range strings.Split(f.Tag.Get("validate"), ",") {
		if n, param, _ := strings.Cut(r, "="); n == name {
			return param
		}
	}
	t.Fatalf("%T.%s has no rule %s", form, field, name)
	return ""
}

// Ensure the forms' tags, which must be constants, say the bounds the
// domain and the console declare elsewhere.
func TestFormTags_match_their_sources(t *testing.T) {
	tests := []struct {
		name      string
		got, want string
	}{
		{"service_key_scopes", tagParam(t, newServiceKeyForm{}, "Scopes", "max"), strconv.Itoa(len(domain.Scopes))},
		{"webhook_events", tagParam(t, newWebhookForm{}, "Events", "max"), strconv.Itoa(len(domain.EventTypes))},
		{"webhook_url", tagParam(t, newWebhookForm{}, "URL", "maxbytes"), strconv.Itoa(domain.MaxWebhookURLLength)},
		{"webhook_description", tagParam(t, newWebhookForm{}, "Description", "maxbytes"), strconv.Itoa(4 * domain.MaxWebhookDescriptionLength)},
		{"redirect_uris", tagParam(t, oauthClientForm{}, "RedirectURIs", "maxbytes"), strconv.Itoa(maxURIsField)},
		{"logout_uris", tagParam(t, oauthClientForm{}, "LogoutURIs", "maxbytes"), strconv.Itoa(maxURIsField)},
		{"domain_organization", tagParam(t, updateDomainForm{}, "Organization", "maxbytes"), strconv.Itoa(maxID)},
		{"overlaps", strings.Join(slices.Sorted(strings.FieldsSeq(tagParam(t, rotateKeyForm{}, "Overlap", "oneof"))), " "),
			strings.Join(slices.Sorted(maps.Keys(overlaps)), " ")},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: the tag says %s, its source %s", tt.name, tt.got, tt.want)
		}
	}
}

// formContext is a request posting form.
func formContext(form url.Values) *gin.Context {
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = httptest.NewRequest(http.MethodPost, "/x", nil)
	c.Request.PostForm = form
	return c
}

// Ensure a provider's form names its first part too long and empties
// only that one, bounds the secret after the fields and the lists after
// both, and on an update does not read a posted id.
func TestBindIdpForm(t *testing.T) {
	long := strings.Repeat("x", 600)
	tests := []struct {
		name, id, wantMsg, wantField string
		form                         url.Values
		check                        func(f idpForm) bool
	}{
		{"good", "", "", "", url.Values{"id": {" gh "}, "name": {"GitHub"}, "enabled": {"on"}}, func(f idpForm) bool { return f.ID == "gh" && f.Enabled && !f.Trusted }},
		{"first_too_long_emptied", "", "This field is too long.", "name", url.Values{"name": {long}, "clientId": {long}},
			func(f idpForm) bool { return f.Name == "" && f.ClientID == long }},
		{"secret_after_fields", "", "This field is too long.", "domains", url.Values{"domains": {strings.Repeat("d", 9000)}, "clientSecret": {strings.Repeat("s", 5000)}}, nil},
		{"secret", "", "The client secret is too long: at most 4096 bytes.", "clientSecret", url.Values{"clientSecret": {strings.Repeat("s", 5000)}, "scopes": {strings.Repeat("a ", 40)}}, nil},
		{"scopes_counted", "", "Use at most 32 scopes.", "scopes", url.Values{"scopes": {strings.Repeat("a ", 40)}}, nil},
		{"update_ignores_a_posted_id", "gh", "", "", url.Values{"id": {long}}, func(f idpForm) bool { return f.ID == "gh" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _, msg, field := bindIdpForm(formContext(tt.form), tt.id)
			if msg != tt.wantMsg || field != tt.wantField || (tt.check != nil && !tt.check(f)) {
				t.Fatalf("got %q %q %+v, want %q %q", msg, field, f, tt.wantMsg, tt.wantField)
			}
		})
	}
}
