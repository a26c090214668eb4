package account

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// The account's profile page (/account): the name and image, the e-mail
// change, the password change and the account's deletion, each posted to
// its own form and handled by the framework's own use case (what
// /api/auth/update-user, change-email, change-password and delete-user
// call), with the same step-up and fresh-session rules (a step-up refusal
// is Shell.Refuse's detour through the hosted second-factor page).

const (
	profilePath  = AccountBase + "/profile"
	emailPath    = AccountBase + "/email"
	passwordPath = AccountBase + "/password"
	deletePath   = AccountBase + "/delete"
)

// The framework's own bounds on these inputs (its update-user,
// change-email, change-password and delete-user bodies).
const (
	maxName  = 256
	maxImage = 2048
	maxEmail = 254
)

// profileView is the profile page.
type profileView struct {
	Name, Email, Image string
	Verified           bool
	Created            time.Time
	TwoFactor          bool
	Form               profileForm
}

// profileForm is what a refused form sent, shown again. Passwords are
// never shown again.
type profileForm struct {
	Name, Image, NewEmail, Confirm string
	RevokeOthers                   bool
}

// ProfileDeps are the profile page's use cases (profile.go).
type ProfileDeps struct {
	Profile   *account.Profile   // the profile, the address change and the account's deletion
	Passwords *account.Passwords // the password change
}

// profileSection is the profile page and its forms.
type profileSection struct {
	*base
	profile   *account.Profile
	passwords *account.Passwords
}

// addProfileRoutes registers the profile page and its forms.
func (s *profileSection) addProfileRoutes(r shell.Section) {
	r.Get(AccountBase, s.profilePage)
	r.Post(profilePath, s.updateProfile)
	r.Post(emailPath, s.changeEmail)
	r.Post(passwordPath, s.changePassword)
	r.Post(deletePath, s.deleteAccount)
}

// profileNotices say what an account form did, after its redirect (?done=).
var profileNotices = shell.Notices{
	"profile":        "Your profile is saved.",
	"email-sent":     "If the new address can be used, a link to confirm it is on its way there. Your address changes when you open it.",
	"email-verified": "Your e-mail address is confirmed.",
	"password":       "Your password is changed.",
	"password-all":   "Your password is changed, and every other session is signed out.",
	"delete-sent":    "A link to confirm the deletion is on its way to your address. Your account is deleted when you open it.",
}

// profilePage shows the signed-in user's profile and its forms.
func (s *profileSection) profilePage(c *gin.Context) {
	v, ok := s.enter(c)
	if !ok {
		return
	}
	u := v.P.User
	s.showProfile(c, v, http.StatusOK, "", "", profileForm{Name: u.Name(), Image: u.Image()})
}

// showProfile renders the profile page with status, and a refused form's
// error, field and input.
func (s *profileSection) showProfile(c *gin.Context, v *shell.Visit, status int, msg, field string, f profileForm) {
	u := v.P.User
	p := accountPage(v, "Your account", "profile")
	pv := &profileView{Name: u.Name(), Email: string(u.Email()), Image: u.Image(), Verified: u.EmailVerified(),
		Created: u.CreatedAt(), TwoFactor: u.TwoFactorEnabled(), Form: f}
	p.Error, p.Field = msg, field
	if status == http.StatusOK {
		p.Notice = profileNotices.Of(c)
	}
	s.pages.profile.Render(c, status, p, pv)
}

// nameForm is the profile form: the name (1 to maxName characters) and
// the image's address (at most maxImage bytes; the page checks it is one).
type nameForm struct {
	Name  string `form:"name,trim" validate:"required,max=256"`
	Image string `form:"image,trim" validate:"maxbytes=2048"`
}

// bindNameForm reads the profile form: its input, to show again, and what
// the form's bounds refuse in it (its message and field), or no message.
// Input refused for its length is not worth showing again.
func bindNameForm(c *gin.Context) (f profileForm, msg, field string) {
	var nf nameForm
	bad, invalid := shell.BindForm(c, &nf).First()
	f = profileForm{Name: nf.Name, Image: nf.Image}
	switch {
	case invalid && bad.Name == "name":
		if len(f.Name) > 4*maxName {
			f.Name = ""
		}
		return f, "Your name must be 1 to 256 characters.", "name"
	case invalid || !domain.IsPictureURL(f.Image):
		if len(f.Image) > maxImage {
			f.Image = ""
		}
		return f, "The image must be an http or https address of at most 2048 characters, or empty for none.", "image"
	}
	return f, "", ""
}

// updateProfile changes the name and image through UpdateUser.
func (s *profileSection) updateProfile(c *gin.Context, v *shell.Visit) {
	f, msg, field := bindNameForm(c)
	if msg != "" {
		s.showProfile(c, v, http.StatusBadRequest, msg, field, f)
		return
	}
	_, err := s.profile.UpdateUser(c.Request.Context(), account.UpdateUser{UserID: v.P.User.ID(), Name: &f.Name, Image: &f.Image})
	if msg, field, ok := formError(err, nil); ok {
		s.showProfile(c, v, http.StatusBadRequest, msg, field, f)
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, AccountBase, "profile")
}

// emailForm is the address change's form: the new address (1 to maxEmail
// bytes; the use case checks it is one).
type emailForm struct {
	NewEmail string `form:"newEmail,trim" validate:"required,maxbytes=254"`
}

// changeEmail asks for the address change through ChangeEmail: the
// framework mails a link to the new address, and nothing changes until it
// is opened.
func (s *profileSection) changeEmail(c *gin.Context, v *shell.Visit) {
	u := v.P.User
	var ef emailForm
	_, invalid := shell.BindForm(c, &ef).First()
	f := profileForm{Name: u.Name(), Image: u.Image(), NewEmail: ef.NewEmail}
	if invalid {
		if len(f.NewEmail) > maxEmail {
			f.NewEmail = ""
		}
		s.showProfile(c, v, http.StatusBadRequest, "Enter the new e-mail address (at most 254 characters).", "newEmail", f)
		return
	}
	err := s.profile.ChangeEmail(c.Request.Context(), account.ChangeEmail{Principal: v.P, NewEmail: f.NewEmail,
		CallbackURL: shell.DoneURL(AccountBase, "email-verified")})
	if msg, field, ok := formError(err, map[string]string{"email": "newEmail"}); ok {
		s.showProfile(c, v, statusOf(err), msg, field, f)
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	shell.Done(c, AccountBase, "email-sent")
}

// passwordForm is the password change's form.
type passwordForm struct {
	Current      string `form:"currentPassword" validate:"required,maxbytes=4096"`
	New          string `form:"newPassword"` // the use case checks it
	Confirm      string `form:"confirmPassword" validate:"eqfield=New"`
	RevokeOthers string `form:"revokeOtherSessions"`
}

// passwordFormErrors say what a malformed part of the form should be, by
// its name.
var passwordFormErrors = map[string]string{ // #nosec G101 -- the password form's error messages by field name, no credentials
	"currentPassword": "Enter your current password.",
	"confirmPassword": "The new password and its confirmation differ.",
}

// command is the password change pf asks for, by the signed-in p from
// client.
func (pf passwordForm) command(p usecase.Principal, client usecase.Client) account.ChangePassword {
	return account.ChangePassword{Principal: p, CurrentPassword: pf.Current, NewPassword: pf.New,
		RevokeOtherSessions: pf.RevokeOthers != "", Client: client}
}

// passwordFailure is the status, message and field of a password change's
// refusal that the form shows; ok is false for every other error, which
// Shell.Refuse answers.
func passwordFailure(err error) (status int, msg, field string, ok bool) {
	if msg, field, ok := formError(err, map[string]string{"password": "currentPassword"}); ok {
		return statusOf(err), msg, field, true
	}
	if errors.Is(err, domain.ErrNotFound) {
		// No password to change: the account signs in through a provider.
		return http.StatusConflict, "Your account has no password: you sign in through a provider. To set one, use “Forgot password?” on the sign-in page.",
			"currentPassword", true
	}
	return 0, "", "", false
}

// changePassword replaces the password through ChangePassword; asked to,
// it signs out every other session and gives this browser a new one.
func (s *profileSection) changePassword(c *gin.Context, v *shell.Visit) {
	u := v.P.User
	var pf passwordForm
	bad, invalid := shell.BindForm(c, &pf).First()
	f := profileForm{Name: u.Name(), Image: u.Image(), RevokeOthers: pf.RevokeOthers != ""}
	if invalid {
		s.showProfile(c, v, http.StatusBadRequest, passwordFormErrors[bad.Name], bad.Name, f)
		return
	}
	ctx := c.Request.Context()
	res, err := s.passwords.ChangePassword(ctx, pf.command(v.P, edge.RequestInfoFrom(ctx).Client()))
	if status, msg, field, ok := passwordFailure(err); ok {
		s.showProfile(c, v, status, msg, field, f)
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	s.passwordChanged(c, res)
}

// passwordChanged finishes a password change: when it signed out every
// other session, this browser's was replaced too, and its cookies go back.
func (s *profileSection) passwordChanged(c *gin.Context, res *account.ChangePasswordResult) {
	if res.Session == nil {
		shell.Done(c, AccountBase, "password")
		return
	}
	s.issueSession(c, res.Token, res.Session)
	shell.Done(c, AccountBase, "password-all")
}

// deleteForm is the deletion's form: the address typed to confirm, and
// the password (none for an account that signs in elsewhere).
type deleteForm struct {
	Confirm  string `form:"confirm,trim"`
	Password string `form:"password" validate:"maxbytes=4096"`
}

// bindDeleteForm reads the deletion's form for u: its input, to show again
// (but not a confirmation too long to be an address), the password, and
// what refuses it (a confirmation that is not u's address, a password over
// the form's bound) as a message and field, or no message.
func bindDeleteForm(c *gin.Context, u *domain.User) (f profileForm, password, msg, field string) {
	var df deleteForm
	_, invalid := shell.BindForm(c, &df).First()
	f = profileForm{Name: u.Name(), Image: u.Image(), Confirm: df.Confirm}
	if !strings.EqualFold(f.Confirm, string(u.Email())) {
		if len(f.Confirm) > maxEmail {
			f.Confirm = ""
		}
		return f, "", "Type your e-mail address exactly to confirm. Nothing was deleted.", "confirm"
	}
	if invalid {
		return f, "", "The password is too long.", "deletePassword"
	}
	return f, df.Password, "", ""
}

// deleteAccount deletes the account through DeleteUser once the typed
// confirmation is the user's address: with the password, at once; without
// one (an account that signs in elsewhere), the framework mails a link that
// confirms it.
func (s *profileSection) deleteAccount(c *gin.Context, v *shell.Visit) {
	f, password, msg, field := bindDeleteForm(c, v.P.User)
	if msg != "" {
		s.showProfile(c, v, http.StatusBadRequest, msg, field, f)
		return
	}
	res, err := s.profile.DeleteUser(c.Request.Context(), account.DeleteUser{Principal: v.P, Password: password, CallbackURL: "/"})
	if msg, field, ok := formError(err, map[string]string{"password": "deletePassword"}); ok {
		s.showProfile(c, v, statusOf(err), msg+" Nothing was deleted.", field, f)
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	if !res.Deleted {
		shell.Done(c, AccountBase, "delete-sent")
		return
	}
	s.signedOut(c)
}

// formError is the message and field of a use case's refusal the form can
// show next to its input (an invalid value, a wrong password, a fresh
// sign-in to do), with fields renaming the use case's fields to the form's;
// ok is false for every other error, which Shell.Refuse answers: a step-up
// the multi-factor rules ask for is its detour through the hosted
// second-factor page and back to the form's page.
func formError(err error, fields map[string]string) (msg, field string, ok bool) {
	var de *domain.Error
	if err == nil || !errors.As(err, &de) {
		return "", "", false
	}
	switch {
	case errors.Is(err, usecase.ErrSessionNotFresh):
		return "This change needs a recent sign-in: sign out and sign in again, then try again.", "", true
	case de.Kind != domain.KindInvalid:
		return "", "", false
	}
	msg = de.Message
	if msg != "" && !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	if len(de.Fields) > 0 {
		field = de.Fields[0].Field
		if f, ok := fields[field]; ok {
			field = f
		}
		if m := de.Fields[0].Message; m != "" && de.Code != domain.CodePasswordTooCommon {
			msg = strings.TrimSuffix(msg, ".") + ": " + m + "."
		}
	}
	return msg, field, true
}

// statusOf is the status a form refused by err answers.
func statusOf(err error) int {
	if domain.KindOf(err) == domain.KindInvalid {
		return http.StatusBadRequest
	}
	return edge.StatusOfErr(err)
}
