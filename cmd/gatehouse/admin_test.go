package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// Ensure admin create tells a new administrator where to go next: in
// production, where administrators need a second factor, the account's
// security page at the public base URL, where they sign in and set up an
// authenticator app or a passkey; in development, which does not ask for
// one, nothing.
func TestAdmin_create_points_to_the_security_page(t *testing.T) {
	production := map[string]string{
		"GATEHOUSE_ENV":            "production",
		"GATEHOUSE_BASE_URL":       "https://id.example.com",
		"GATEHOUSE_SECRET":         "0123456789abcdef0123456789abcdef-long",
		"GATEHOUSE_SMTP_HOST":      "smtp.example.com",
		"GATEHOUSE_INVITATION_URL": "https://app.example.com/invitations/{id}",
	}
	for name, tc := range map[string]struct {
		env       map[string]string
		want, not []string
	}{
		"production": {production,
			[]string{"403 ADMIN_MFA_REQUIRED", "Next step: sign in at https://id.example.com/account/security, the account's security page, and set up an authenticator app or a passkey there."},
			[]string{"/api/auth/two-factor"}},
		"development": {map[string]string{}, nil, []string{"/account/security", "ADMIN_MFA_REQUIRED"}},
	} {
		t.Run(name, func(t *testing.T) {
			env := map[string]string{"GATEHOUSE_DATA_DIR": filepath.Join(t.TempDir(), "data")}
			for k, v := range tc.env {
				env[k] = v
			}
			var out strings.Builder
			err := run(context.Background(), []string{"gatehouse", "admin", "create", "--email", "root@example.com", "--name", "Root", "--password-stdin"},
				func(k string) string { return env[k] }, strings.NewReader("a long passphrase of the root\n"), &out)
			if err != nil {
				t.Fatalf("admin create: %v\n%s", err, out.String())
			}
			if !strings.Contains(out.String(), "administrator root@example.com created") {
				t.Fatalf("admin create printed %q", out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("admin create printed\n%s\nwant %q", out.String(), w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(out.String(), w) {
					t.Errorf("admin create printed\n%s\nwhich names %q", out.String(), w)
				}
			}
		})
	}
}
