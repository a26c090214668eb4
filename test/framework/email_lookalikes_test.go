package framework

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/test/harness"
)

// lookalikeAddresses are addresses that could pass for another one, each
// with the neutral code the trusted API answers.
var lookalikeAddresses = []struct {
	name, email, code string
}{
	{"zero_width_space", "ada\u200b@example.com", "email.invisible_characters"},
	{"zero_width_joiner_in_domain", "ada@exam\u200dple.com", "email.invisible_characters"},
	{"fullwidth", "ａｄａ@ｅｘａｍｐｌｅ.ｃｏｍ", "email.not_normalized"},
	{"cyrillic_a_in_domain", "ada@p\u0430ypal.com", "email.mixed_script"},
	{"cyrillic_a_in_punycode", "ada@xn--pypal-4ve.com", "email.mixed_script"},
}

// Ensure look-alike addresses (invisible characters, fullwidth forms, a
// domain label mixing scripts) are refused by sign-up and sign-in with
// Better Auth's 400 INVALID_EMAIL and a message saying why, and by the
// trusted API and the admin plugin's create-user with their own 400, while
// an internationalised address in one script still signs up.
func TestEmail_lookalikes_are_refused(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		k, admin, _ := harness.MustUsersKey(t, app)
		for _, tt := range lookalikeAddresses {
			t.Run(tt.name, func(t *testing.T) {
				for path, body := range map[string]string{
					"/api/auth/sign-up/email": harness.MustJSON(t, map[string]any{"name": "Ada", "email": tt.email, "password": "correct horse battery"}),
					"/api/auth/sign-in/email": harness.MustCredentials(t, tt.email, "correct horse battery"),
				} {
					msg := harness.MustCode(t, app.NewClient(t).Post(path, body), http.StatusBadRequest, "INVALID_EMAIL")
					if !strings.HasPrefix(msg, "Invalid email: ") || strings.Contains(msg, "@") {
						t.Fatalf("%s message = %q, want a reason and no address", path, msg)
					}
				}
				r := k.Do(http.MethodPost, harness.UsersPath, map[string]any{"email": tt.email, "name": "Ada"})
				p := harness.MustProblem(t, r, http.StatusBadRequest, tt.code)
				if errs, _ := p["errors"].([]any); len(errs) != 1 || harness.MustObject(t, errs[0])["location"] != "body.email" {
					t.Fatalf("problem errors = %v, want one at body.email", p["errors"])
				}
				if strings.Contains(string(r.Body), tt.email) {
					t.Fatalf("the problem repeats the address: %s", r.Body)
				}
				harness.MustCode(t, admin.Post("/api/auth/admin/create-user", harness.MustJSON(t, map[string]any{"name": "Ada", "email": tt.email, "password": "correct horse battery"})),
					http.StatusBadRequest, "INVALID_EMAIL")
			})
		}
		t.Run("single_script_idn_signs_up", func(t *testing.T) {
			for _, email := range []string{harness.Email(t, "иван@пример.рф"), harness.Email(t, "ada@bücher.de")} {
				if got := harness.MustUser(t, harness.MustSignUp(t, app.NewClient(t), "Ada", email, "correct horse battery"))["email"]; got != email {
					t.Fatalf("signed up as %v, want %s", got, email)
				}
			}
			harness.MustCreateBackendUser(t, k, map[string]any{"email": harness.Email(t, "bob@bücher.de"), "name": "Bob"})
		})
	})
}
