package account

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/application/mfa"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// The security page's passkey forms, through the framework's own use case
// (account.PasskeyHandler, what /api/auth/passkey/* calls): registration in
// two posts (the options on the page, then the browser's answer, which the
// page's script puts in the form), rename and removal.

// The passkey forms, bounded as the framework bounds PasskeyUpdateInput's
// name (4*maxPasskeyName bytes, and passkeyName checks its characters),
// PasskeyIDInput's id (1400 bytes), a registration's answer (64 KiB) and
// TwoFactorVerifyInput's code (64 bytes).
type (
	// newPasskeyForm starts a registration: the name chosen.
	newPasskeyForm struct {
		Name string `form:"name" validate:"maxbytes=1020"`
	}
	// verifyPasskeyForm ends one: the name, and the browser's answer
	// (JSON) that the page's script put in the form.
	verifyPasskeyForm struct {
		Name     string `form:"name" validate:"maxbytes=1020"`
		Response string `form:"response" validate:"required,maxbytes=65536"`
	}
	// renamePasskeyForm names a passkey (by its id, base64url as the page
	// writes it) anew.
	renamePasskeyForm struct {
		ID   string `form:"id" validate:"required,maxbytes=1400"`
		Name string `form:"name" validate:"maxbytes=1020"`
	}
	// deletePasskeyForm removes a passkey, with a code that may prove a
	// second factor first.
	deletePasskeyForm struct {
		ID   string `form:"id" validate:"required,maxbytes=1400"`
		Code string `form:"code" validate:"maxbytes=64"`
	}
)

// passkeyName is a passkey's name as sent (within its form's bound)
// without the spaces around it, and whether the framework takes it: 1 to
// maxPasskeyName characters.
func passkeyName(raw string) (string, bool) {
	name := strings.TrimSpace(raw)
	return name, name != "" && utf8.RuneCountInString(name) <= maxPasskeyName
}

// passkeyNameOf is the name a form sent, checked as passkeyName does, with
// invalid the form's bounds refusing its input; shown is what the form
// shows again when it is refused: the name as sent, unless too long.
func passkeyNameOf(raw string, invalid bool) (name, shown string, ok bool) {
	name, ok = passkeyName(raw)
	if invalid {
		raw = "" // too long to show again
	}
	return name, raw, ok && !invalid
}

// The passkey forms' messages that more than one form says.
const (
	passkeyNameMsg = "Name the passkey: 1 to 255 characters."
	noSuchPasskey  = "No such passkey: nothing was changed."
)

// newPasskey starts a registration (PasskeyHandler.RegisterOptions, as
// /api/auth/passkey/generate-register-options): the page carries the
// options for the script, and the challenge cookie goes back.
func (s *securitySection) newPasskey(c *gin.Context, v *shell.Visit) {
	var nf newPasskeyForm
	_, invalid := shell.BindForm(c, &nf).First()
	name, shown, ok := passkeyNameOf(nf.Name, invalid)
	if !ok {
		s.showSecurity(c, v, http.StatusBadRequest, passkeyNameMsg, "passkey-name",
			func(sv *securityView) { sv.Form.Name = shown })
		return
	}
	res, err := s.passkeys.RegisterOptions(c.Request.Context(), mfa.PasskeyRegisterOptions{Principal: v.P})
	if err != nil {
		s.passkeyRefused(c, v, err, "passkey-name", securityForm{Name: name})
		return
	}
	rv, err := registerViewOf(res, name)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	ck := s.Cookies.PasskeyCookie(res.ChallengeID, mfa.PasskeyChallengeTTL)
	http.SetCookie(c.Writer, &ck)
	s.showSecurity(c, v, http.StatusOK, "", "", func(sv *securityView) { sv.Register = rv })
}

// registerViewOf is the registration res started for a passkey named
// name: its options, as JSON for the page's script.
func registerViewOf(res *mfa.PasskeyOptions, name string) (*registerView, error) {
	opts, err := json.Marshal(res.Creation)
	if err != nil {
		return nil, domain.Internal("console: passkey options", err)
	}
	return &registerView{Options: string(opts), Name: name}, nil
}

// passkeyRefused answers a passkey use case's refusal: a session too old
// to register asks to sign in again, a missing step-up asks for a second
// factor; anything else is a refusal page.
func (s *securitySection) passkeyRefused(c *gin.Context, v *shell.Visit, err error, field string, f securityForm) {
	var msg string
	switch {
	case errors.Is(err, usecase.ErrSessionNotFresh):
		msg = "You signed in a while ago: sign in again, then add the passkey. Nothing was changed."
	case errors.Is(err, usecase.ErrStepUpRequired):
		msg = "Removing your last passkey needs a second factor proven in the last few minutes: confirm with a code, or sign in with this passkey, then try again. Nothing was changed."
	case errors.Is(err, mfa.ErrPasskeysOff):
		msg = "Passkeys are not available on this address."
	case errors.Is(err, mfa.ErrPasskeyInvalidName):
		msg = passkeyNameMsg
	case domain.KindOf(err) == domain.KindInvalid || domain.KindOf(err) == domain.KindUnauthenticated:
		msg = "The passkey was not accepted: " + messageOf(err) + " Nothing was changed."
	default:
		s.shell.Refuse(c, err)
		return
	}
	status := http.StatusBadRequest
	if domain.KindOf(err) == domain.KindForbidden {
		status = http.StatusForbidden
	}
	s.showSecurity(c, v, status, msg, field, func(sv *securityView) {
		sv.Form, sv.Stale = f, errors.Is(err, usecase.ErrSessionNotFresh)
	})
}

// verifyPasskey finishes a registration (PasskeyHandler.VerifyRegistration,
// as /api/auth/passkey/verify-registration) with the browser's answer,
// which the script put in the form.
func (s *securitySection) verifyPasskey(c *gin.Context, v *shell.Visit) {
	ctx := c.Request.Context()
	var vf verifyPasskeyForm
	bad, invalid := shell.BindForm(c, &vf).First()
	name, ok := passkeyName(vf.Name)
	if !ok || (invalid && bad.Name == "name") {
		s.showSecurity(c, v, http.StatusBadRequest, passkeyNameMsg, "passkey-name", nil)
		return
	}
	reply := vf.Response
	if invalid || !json.Valid([]byte(reply)) {
		s.showSecurity(c, v, http.StatusBadRequest, "The browser gave no passkey: try again.", "passkey-response",
			func(sv *securityView) { sv.Form.Name = name })
		return
	}
	_, err := s.passkeys.VerifyRegistration(ctx, mfa.PasskeyVerifyRegistration{Principal: v.P, Actor: accountActor(c, v),
		ChallengeID: s.Cookies.PasskeyChallenge(c.Request), Response: []byte(reply), Name: name})
	if err != nil {
		s.passkeyRefused(c, v, err, "passkey-response", securityForm{Name: name})
		return
	}
	shell.Done(c, securityPath, "passkey-added")
}

// accountActor is the signed-in user, acting on their own account.
func accountActor(c *gin.Context, v *shell.Visit) usecase.Actor {
	ctx := c.Request.Context()
	return usecase.UserActor(v.P.User.ID(), edge.RequestIDFrom(ctx), edge.RequestInfoFrom(ctx).ClientIP)
}

// passkeyID decodes a form's passkey id (base64url, as the page writes
// it).
func passkeyID(raw string) ([]byte, bool) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(raw, "="))
	return b, err == nil && len(b) > 0
}

// renamePasskey names a passkey (PasskeyHandler.Rename, as
// /api/auth/passkey/update-passkey).
func (s *securitySection) renamePasskey(c *gin.Context, v *shell.Visit) {
	var rf renamePasskeyForm
	bad, invalid := shell.BindForm(c, &rf).First()
	id, ok := passkeyID(rf.ID)
	if !ok || (invalid && bad.Name == "id") {
		s.showSecurity(c, v, http.StatusBadRequest, noSuchPasskey, "passkey-id", nil)
		return
	}
	name, shown, ok := passkeyNameOf(rf.Name, invalid)
	if !ok {
		s.showSecurity(c, v, http.StatusBadRequest, passkeyNameMsg, "rename-name",
			func(sv *securityView) { sv.Form.Rename, sv.Form.RenameID = shown, rf.ID })
		return
	}
	if _, err := s.passkeys.Rename(c.Request.Context(), mfa.PasskeyChange{Principal: v.P, Actor: accountActor(c, v), ID: id, Name: name}); err != nil {
		s.passkeyChangeRefused(c, v, err, "rename-name")
		return
	}
	shell.Done(c, securityPath, "passkey-renamed")
}

// passkeyChangeRefused answers the refusal of a change to one passkey: a
// passkey the user does not have is a 404 naming it; anything else is
// passkeyRefused's, with field.
func (s *securitySection) passkeyChangeRefused(c *gin.Context, v *shell.Visit, err error, field string) {
	if errors.Is(err, domain.ErrPasskeyNotFound) || domain.KindOf(err) == domain.KindNotFound {
		s.showSecurity(c, v, http.StatusNotFound, noSuchPasskey, "passkey-id", nil)
		return
	}
	s.passkeyRefused(c, v, err, field, securityForm{})
}

// deletePasskey removes a passkey (PasskeyHandler.Delete, as
// /api/auth/passkey/delete-passkey); the last one needs a recent second
// factor, which the form's code may prove.
func (s *securitySection) deletePasskey(c *gin.Context, v *shell.Visit) {
	var df deletePasskeyForm
	bad, invalid := shell.BindForm(c, &df).First()
	id, ok := passkeyID(df.ID)
	if !ok || (invalid && bad.Name == "id") {
		s.showSecurity(c, v, http.StatusBadRequest, noSuchPasskey, "passkey-id", nil)
		return
	}
	if invalid {
		s.showSecurity(c, v, http.StatusBadRequest, "The code is too long.", "delete-code", nil)
		return
	}
	if err := s.stepUp(c, v, df.Code); err != nil {
		s.securityRefused(c, v, err, "delete")
		return
	}
	if err := s.passkeys.Delete(c.Request.Context(), mfa.PasskeyChange{Principal: v.P, Actor: accountActor(c, v), ID: id}); err != nil {
		s.passkeyChangeRefused(c, v, err, "delete-code")
		return
	}
	shell.Done(c, securityPath, "passkey-removed")
}

// messageOf is a use case error's message, safe to show.
func messageOf(err error) string {
	var de *domain.Error
	if errors.As(err, &de) && de.Message != "" {
		return de.Message + "."
	}
	return "it could not be checked."
}
