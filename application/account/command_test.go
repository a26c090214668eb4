package account_test

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

func TestSignIn_rehashes_imported_hashes(t *testing.T) {
	bc, err := bcrypt.GenerateFromPassword([]byte("password123"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, hash string
	}{
		// Produced by Node's crypto.scryptSync exactly as Better Auth hashes.
		{"better_auth_scrypt", "2145a75044393d443f7df0da1fae7872:c53845b9707a63b1deb2185d0b10764dc2493d1c4889acb0b4289fc9f4ae794f18699029ff5ec1f3e34573153499c2a44aa0591ab8548e49df52bba30a3ffecc"},
		{"bcrypt", string(bc)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := usecasetest.NewWorld(t, false)
			u := w.MustSignUp(t, "ada@example.com").User
			if err := w.Creds.Update(t.Context(), u.ID(), func(c *domain.Credential) error { c.SetHash(tt.hash, w.Clock.Now()); return nil }); err != nil {
				t.Fatal(err)
			}
			if _, err := w.SignIns.SignIn(t.Context(), account.SignIn{Email: "ada@example.com", Password: "password123", RememberMe: true}); err != nil {
				t.Fatalf("sign-in with the imported hash: %v", err)
			}
			c, err := w.Creds.Get(t.Context(), u.ID())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(c.Hash(), "$argon2id$") {
				t.Fatalf("hash after sign-in = %q, want argon2id", c.Hash()[:12])
			}
			if _, err := w.SignIns.SignIn(t.Context(), account.SignIn{Email: "ada@example.com", Password: "password123"}); err != nil {
				t.Fatalf("sign-in after rehash: %v", err)
			}
		})
	}
}

func TestSignIn_lockout_and_cooldown(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	w.MustSignUp(t, "ada@example.com")
	bad := account.SignIn{Email: "ada@example.com", Password: "wrong password"}
	good := account.SignIn{Email: "ada@example.com", Password: usecasetest.Password}
	for range 3 {
		_, err := w.SignIns.SignIn(t.Context(), bad)
		usecasetest.MustCode(t, err, "auth.invalid_credentials")
	}
	_, err := w.SignIns.SignIn(t.Context(), good)
	usecasetest.MustCode(t, err, "auth.invalid_credentials") // locked: the right password is refused alike
	w.Clock.Advance(15 * time.Minute)
	if _, err := w.SignIns.SignIn(t.Context(), good); err != nil {
		t.Fatalf("after the cooldown: %v", err)
	}
	for range 2 {
		_, _ = w.SignIns.SignIn(t.Context(), bad)
	}
	if _, err := w.SignIns.SignIn(t.Context(), good); err != nil {
		t.Fatalf("success resets the count, so 2 failures do not lock: %v", err)
	}
}

func TestSignUp_taken_address_is_not_revealed_when_verification_is_required(t *testing.T) {
	w := usecasetest.NewWorld(t, true)
	first := w.MustSignUp(t, "ada@example.com")
	second, err := w.Registration.SignUp(t.Context(), account.SignUp{Name: "Eve", Email: "ADA@example.com", Password: usecasetest.Password})
	if err != nil {
		t.Fatalf("second sign-up: %v", err)
	}
	if first.Token != "" || second.Token != "" || second.User.ID() == first.User.ID() {
		t.Fatalf("tokens %q %q, ids %s %s", first.Token, second.Token, first.User.ID(), second.User.ID())
	}
	w.Mail.Last(t, domain.MailAccountExists)
	_, err = w.SignIns.SignIn(t.Context(), account.SignIn{Email: "ada@example.com", Password: usecasetest.Password})
	usecasetest.MustCode(t, err, "auth.email_not_verified")
}

func TestSignUp_taken_address_is_422_code_without_verification(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	w.MustSignUp(t, "ada@example.com")
	_, err := w.Registration.SignUp(t.Context(), account.SignUp{Name: "Eve", Email: "ada@example.com", Password: usecasetest.Password})
	usecasetest.MustCode(t, err, "user.email_exists")
}

func TestAuthenticate_refresh_and_expiry(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	res := w.MustSignUp(t, "ada@example.com")
	got, err := w.Sessions.Authenticate(t.Context(), account.Authenticate{Token: res.Token, Refresh: true})
	if err != nil || got.Refreshed {
		t.Fatalf("fresh session: refreshed=%v err=%v", got != nil && got.Refreshed, err)
	}
	w.Clock.Advance(25 * time.Hour)
	got, err = w.Sessions.Authenticate(t.Context(), account.Authenticate{Token: res.Token, Refresh: true})
	if err != nil || !got.Refreshed || !got.Session.ExpiresAt().Equal(w.Clock.Now().Add(7*24*time.Hour)) {
		t.Fatalf("after a day: %+v, %v", got, err)
	}
	w.Clock.Advance(7*24*time.Hour + time.Second)
	_, err = w.Sessions.Authenticate(t.Context(), account.Authenticate{Token: res.Token})
	usecasetest.MustCode(t, err, "UNAUTHORIZED")
}

func TestResetPassword_link_works_once_and_ends_sessions(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	res := w.MustSignUp(t, "ada@example.com")
	if err := w.Passwords.RequestPasswordReset(t.Context(), account.RequestPasswordReset{Email: "ada@example.com"}); err != nil {
		t.Fatal(err)
	}
	w.Settle(t)
	link := w.Mail.Last(t, domain.MailResetPassword).Link
	token := link[strings.LastIndex(link, "/")+1:]
	usecasetest.MustCode(t, w.Passwords.ResetPassword(t.Context(), account.ResetPassword{Token: token, NewPassword: "short"}), domain.CodePasswordTooShort)
	if err := w.Passwords.ResetPassword(t.Context(), account.ResetPassword{Token: token, NewPassword: "a new long passphrase"}); err != nil {
		t.Fatalf("a refused password must leave the link working: %v", err)
	}
	usecasetest.MustCode(t, w.Passwords.ResetPassword(t.Context(), account.ResetPassword{Token: token, NewPassword: "another passphrase"}), "password_reset.invalid_token")
	_, err := w.Sessions.Authenticate(t.Context(), account.Authenticate{Token: res.Token})
	usecasetest.MustCode(t, err, "UNAUTHORIZED")
	if err := w.Passwords.RequestPasswordReset(t.Context(), account.RequestPasswordReset{Email: "nobody@example.com"}); err != nil {
		t.Fatalf("unknown address: %v", err)
	}
}

func TestResetPassword_expired_link_is_refused(t *testing.T) {
	w := usecasetest.NewWorld(t, false)
	w.MustSignUp(t, "ada@example.com")
	if err := w.Passwords.RequestPasswordReset(t.Context(), account.RequestPasswordReset{Email: "ada@example.com"}); err != nil {
		t.Fatal(err)
	}
	w.Settle(t)
	link := w.Mail.Last(t, domain.MailResetPassword).Link
	w.Clock.Advance(time.Hour)
	usecasetest.MustCode(t, w.Passwords.ResetPassword(t.Context(), account.ResetPassword{Token: link[strings.LastIndex(link, "/")+1:], NewPassword: "a new long passphrase"}), "password_reset.invalid_token")
}
