package account

import (
	_ "embed" // the passkey ceremony's script
	"encoding/base64"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	qr "github.com/piglig/go-qr"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/shell"
	"github.com/gatehouse/gatehouse/application/mfa"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// The security page (/account/security): the signed-in user's second
// factors through the framework's own use cases (what /api/auth/two-factor/*
// and /api/auth/passkey/* call): TOTP enrolment with a QR code drawn here,
// its confirmation and removal, new backup codes, and passkeys (list,
// register, rename, remove). Secrets (the TOTP key, backup codes) are in the
// answer to the form that made them, never stored for a later page. Where
// the step-up rules ask for a recent second factor, the form takes a code,
// and the page links to the hosted step-up pages.

const securityPath = AccountBase + "/security"

// The security page's forms.
const (
	totpEnablePath    = securityPath + "/totp/enable"
	totpConfirmPath   = securityPath + "/totp/confirm"
	totpDisablePath   = securityPath + "/totp/disable"
	backupCodesPath   = securityPath + "/backup-codes"
	passkeyNewPath    = securityPath + "/passkeys/new"
	passkeyVerifyPath = securityPath + "/passkeys/verify"
	passkeyRenamePath = securityPath + "/passkeys/rename"
	passkeyDeletePath = securityPath + "/passkeys/delete"
	passkeyScriptPath = AccountBase + "/assets/passkey.js"
)

// maxPasskeyName bounds a passkey's name in characters, as the framework
// does (PasskeyUpdateInput); the forms' other bounds are their binder tags.
const maxPasskeyName = 255

// securityView is the security page.
type securityView struct {
	TwoFactor bool
	// Enrol is a new TOTP factor's key, shown once in the answer to the
	// enable form; Confirming shows the form for its first code.
	Enrol      *enrolView
	Confirming bool
	// Codes are new backup codes, shown once.
	Codes    []string
	Passkeys []passkeyRow
	// Register is a passkey registration in progress: its options for the
	// script.
	Register *registerView
	Form     securityForm
	// Stale says the session is too old to register: sign in again.
	Stale bool
	// Script is the passkey script's URL, and WebAuthn that of the
	// shell's helpers it needs, loaded first; StepUp and SignIn are the
	// hosted pages that prove a second factor (a code, or a passkey
	// sign-in) and come back here.
	Script, WebAuthn, StepUp, SignIn string
}

// enrolView is a new TOTP key: the QR code (a PNG data URI), the key as
// text, and the backup codes.
type enrolView struct {
	QR          template.URL
	Secret      string
	BackupCodes []string
}

// enrolViewOf is the new TOTP key of res: its key URI drawn as a QR code,
// its key as text, and its backup codes.
func enrolViewOf(res *mfa.EnableTwoFactorResult) (*enrolView, error) {
	code, err := qr.EncodeText(res.TOTPURI, qr.Medium)
	if err != nil {
		return nil, domain.Internal("console: QR code", err)
	}
	png, err := code.ToPNGBytes(qr.NewQrCodeImgConfig(6, 4))
	if err != nil {
		return nil, domain.Internal("console: QR code", err)
	}
	secret := ""
	if u, err := url.Parse(res.TOTPURI); err == nil {
		secret = u.Query().Get("secret")
	}
	// #nosec G203 -- a data: URI of our own PNG in standard base64: no markup can reach it.
	return &enrolView{QR: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png)),
		Secret: groupSecret(secret), BackupCodes: res.BackupCodes}, nil
}

// registerView is a passkey registration's options, as JSON for the
// script, and the name the user chose.
type registerView struct {
	Options string
	Name    string
}

// passkeyRow is one of the user's passkeys.
type passkeyRow struct {
	ID, Name          string
	Created, LastUsed time.Time
	Synced            bool
}

// securityForm is what a refused form sent, shown again (never a
// password or a code).
type securityForm struct{ Name, Rename, RenameID string }

// SecurityDeps are the security page's use cases (security.go and
// passkeys.go).
type SecurityDeps struct {
	TwoFactor *mfa.TwoFactor // the authenticator app and backup codes
	Passkeys  *mfa.Passkeys  // the passkeys
}

// securitySection is the security page and its forms, the two-factor
// ones here and the passkey ones in passkeys.go, and the passkey script.
type securitySection struct {
	*base
	twoFactor *mfa.TwoFactor
	passkeys  *mfa.Passkeys
	passkey   *shell.Asset
}

// addSecurityRoutes registers the security page, its forms and the passkey
// script.
func (s *securitySection) addSecurityRoutes(r shell.Section) {
	s.passkey.Route(s.Kit)
	r.Get(securityPath, s.securityPage)
	r.Post(totpEnablePath, s.enableTOTP)
	r.Post(totpConfirmPath, s.confirmTOTP)
	r.Post(totpDisablePath, s.disableTOTP)
	r.Post(backupCodesPath, s.newBackupCodes)
	r.Post(passkeyNewPath, s.newPasskey)
	r.Post(passkeyVerifyPath, s.verifyPasskey)
	r.Post(passkeyRenamePath, s.renamePasskey)
	r.Post(passkeyDeletePath, s.deletePasskey)
}

// securityNotices say what a security form did (?done=).
var securityNotices = shell.Notices{
	"totp-on":         "Two-factor authentication is on. Keep your backup codes somewhere safe.",
	"totp-off":        "Two-factor authentication is off: your authenticator app and backup codes no longer work.",
	"passkey-added":   "The passkey is registered: you can sign in with it.",
	"passkey-renamed": "The passkey is renamed.",
	"passkey-removed": "The passkey is removed: it no longer signs you in.",
	"stepped-up":      "You confirmed it is you.",
}

// securityPage shows the user's second factors.
func (s *securitySection) securityPage(c *gin.Context) {
	v, ok := s.enter(c)
	if !ok {
		return
	}
	p, sv, err := s.securityState(c, v)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	p.Notice = securityNotices.Of(c)
	s.pages.security.Render(c, http.StatusOK, p, sv)
}

// securityState reads the user's factors through the framework's use
// cases into a new page.
func (s *securitySection) securityState(c *gin.Context, v *shell.Visit) (*shell.Page, *securityView, error) {
	list, err := s.passkeys.List(c.Request.Context(), v.P)
	if err != nil {
		return nil, nil, err
	}
	sv := &securityView{TwoFactor: v.P.User.TwoFactorEnabled(), Script: s.passkey.URL(), WebAuthn: shell.WebAuthnScript().URL(),
		StepUp: edge.PageURL(edge.TwoFactorPath, url.Values{"callbackURL": {shell.DoneURL(securityPath, "stepped-up")}}),
		SignIn: edge.PageURL("/sign-in", url.Values{"callbackURL": {shell.DoneURL(securityPath, "stepped-up")}})}
	for _, k := range list {
		sv.Passkeys = append(sv.Passkeys, passkeyRow{ID: base64.RawURLEncoding.EncodeToString(k.ID), Name: k.Name,
			Created: k.CreatedAt, LastUsed: k.LastUsedAt, Synced: k.BackupEligible})
	}
	return accountPage(v, "Security", "security"), sv, nil
}

// showSecurity renders the security page with status and a refused
// form's message and field; edit fills in what the form needs shown.
func (s *securitySection) showSecurity(c *gin.Context, v *shell.Visit, status int, msg, field string, edit func(sv *securityView)) {
	p, sv, err := s.securityState(c, v)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	p.Error, p.Field = msg, field
	if edit != nil {
		edit(sv)
	}
	s.pages.security.Render(c, status, p, sv)
}

// The security page's two-factor forms, bounded as the framework bounds
// TwoFactorPasswordInput's password (4096 bytes) and
// TwoFactorVerifyInput's code (64 bytes).
type (
	// enableForm is the authenticator app's set-up: the password.
	enableForm struct {
		Password string `form:"password" validate:"required,maxbytes=4096"`
	}
	// codeForm is the first code of a new authenticator app (its spaces
	// dropped by compactCode).
	codeForm struct {
		Code string `form:"code" validate:"maxbytes=64"`
	}
	// changeForm is a change the step-up rules guard: the password, and
	// a code that may prove a second factor first.
	changeForm struct {
		Password string `form:"password" validate:"required,maxbytes=4096"`
		Code     string `form:"code" validate:"maxbytes=64"`
	}
)

// compactCode is a code as typed, without its spaces.
func compactCode(code string) string { return strings.ReplaceAll(strings.TrimSpace(code), " ", "") }

// enableTOTP starts enrolment (TwoFactorHandler.Enable, as
// /api/auth/two-factor/enable): with the password, a new key and backup
// codes, shown in this answer only.
func (s *securitySection) enableTOTP(c *gin.Context, v *shell.Visit) {
	ctx := c.Request.Context()
	var ef enableForm
	if _, invalid := shell.BindForm(c, &ef).First(); invalid {
		s.showSecurity(c, v, http.StatusBadRequest, "Enter your password to set up an authenticator app.", "totp-password", nil)
		return
	}
	res, err := s.twoFactor.Enable(ctx, mfa.EnableTwoFactor{Principal: v.P, Password: ef.Password,
		Client: edge.RequestInfoFrom(ctx).Client(), Origin: edge.Origin(ctx)})
	if err != nil {
		s.securityRefused(c, v, err, "totp")
		return
	}
	ev, err := enrolViewOf(res)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	s.showSecurity(c, v, http.StatusOK, "", "", func(sv *securityView) {
		sv.Enrol, sv.Confirming = ev, true
	})
}

// groupSecret writes a base32 key in groups of four, easier to type.
func groupSecret(secret string) string {
	var b strings.Builder
	for i, r := range secret {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// confirmTOTP turns two-factor on with the first code
// (TwoFactorHandler.VerifyTOTP in the session, as
// /api/auth/two-factor/verify-totp): the session is replaced, so its new
// cookie goes back.
func (s *securitySection) confirmTOTP(c *gin.Context, v *shell.Visit) {
	ctx := c.Request.Context()
	var cf codeForm
	_, invalid := shell.BindForm(c, &cf).First()
	code := compactCode(cf.Code)
	if invalid || code == "" {
		s.showSecurity(c, v, http.StatusBadRequest, "Enter the six-digit code your authenticator app shows.", "totp-code",
			func(sv *securityView) { sv.Confirming = true })
		return
	}
	res, err := s.twoFactor.VerifyTOTP(ctx, mfa.VerifySecondFactor{Principal: &v.P, Code: code,
		Client: edge.RequestInfoFrom(ctx).Client(), Origin: edge.Origin(ctx)})
	if msg, edit, ok := confirmFailure(err); ok {
		s.showSecurity(c, v, http.StatusBadRequest, msg, "totp-code", edit)
		return
	}
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	if res.Rotated {
		s.issueSession(c, res.Token, res.Session)
	}
	shell.Done(c, securityPath, "totp-on")
}

// confirmFailure is what the confirmation's form says of the use case's
// refusal err, and edit what the page shows again (the form for the first
// code, while two-factor is still off); ok is false for every other
// error, which Shell.Refuse answers.
func confirmFailure(err error) (msg string, edit func(sv *securityView), ok bool) {
	switch {
	case errors.Is(err, mfa.ErrTOTPNotEnabled):
		return "There is no authenticator app to confirm: set one up first.", nil, true
	case errors.Is(err, mfa.ErrInvalidCode):
		return "That code is not right. Enter the code your app shows now.",
			func(sv *securityView) { sv.Confirming = !sv.TwoFactor }, true
	}
	return "", nil, false
}

// stepUp proves a second factor in the session with the form's code (a
// TOTP code, else a backup code), as answering verify-totp or
// verify-backup-code while signed in does. No code, nothing proven: the
// action's own step-up rule decides.
func (s *securitySection) stepUp(c *gin.Context, v *shell.Visit, code string) error {
	code = compactCode(code)
	if code == "" {
		return nil
	}
	ctx := c.Request.Context()
	cmd := mfa.VerifySecondFactor{Principal: &v.P, Code: code, Client: edge.RequestInfoFrom(ctx).Client(), Origin: edge.Origin(ctx)}
	verify := s.twoFactor.VerifyBackupCode
	if len(code) == 6 && strings.Trim(code, "0123456789") == "" {
		verify = s.twoFactor.VerifyTOTP
	}
	res, err := verify(ctx, cmd)
	if err != nil {
		return err
	}
	// The session, stepped up, is what the action's rule reads.
	if res.Session != nil && res.Session.ID() == v.P.Session.ID() {
		v.P.Session = res.Session
	}
	return nil
}

// securityRefused answers a use case's refusal of a security form: a wrong
// password or code names its field, a missing step-up asks for a code;
// anything else is a refusal page.
func (s *securitySection) securityRefused(c *gin.Context, v *shell.Visit, err error, form string) {
	msg, field := "", form+"-password"
	switch {
	case errors.Is(err, usecase.ErrStepUpRequired):
		msg, field = "This needs a second factor proven in the last few minutes: enter a code from your authenticator app or a backup code, or confirm with a passkey first.", form+"-code"
	case errors.Is(err, mfa.ErrInvalidCode), errors.Is(err, mfa.ErrInvalidBackupCode):
		msg, field = "That code is not right: nothing was changed.", form+"-code"
	case errors.Is(err, usecase.ErrInvalidPassword):
		msg = "That password is not right: nothing was changed."
	case errors.Is(err, mfa.ErrTOTPAlreadyEnabled):
		msg = "Two-factor authentication is on already."
	case errors.Is(err, mfa.ErrTwoFactorNotEnabled), errors.Is(err, mfa.ErrTOTPNotEnabled):
		msg = "Two-factor authentication is off."
	default:
		s.shell.Refuse(c, err)
		return
	}
	s.showSecurity(c, v, http.StatusBadRequest, msg, field, nil)
}

// twoFactorChange reads the password and the code of a change that the
// step-up rules guard, and proves the code first; it reports false when it
// answered.
func (s *securitySection) twoFactorChange(c *gin.Context, v *shell.Visit, form string) (string, bool) {
	var cf changeForm
	if bad, invalid := shell.BindForm(c, &cf).First(); invalid {
		if bad.Name == "password" {
			s.showSecurity(c, v, http.StatusBadRequest, "Enter your password.", form+"-password", nil)
		} else {
			s.showSecurity(c, v, http.StatusBadRequest, "The code is too long.", form+"-code", nil)
		}
		return "", false
	}
	if err := s.stepUp(c, v, cf.Code); err != nil {
		s.securityRefused(c, v, err, form)
		return "", false
	}
	return cf.Password, true
}

// disableTOTP turns two-factor off (TwoFactorHandler.Disable, as
// /api/auth/two-factor/disable) and forgets this browser's trust.
func (s *securitySection) disableTOTP(c *gin.Context, v *shell.Visit) {
	pw, ok := s.twoFactorChange(c, v, "disable")
	if !ok {
		return
	}
	err := s.twoFactor.Disable(c.Request.Context(), mfa.TwoFactorPassword{Principal: v.P, Password: pw, Origin: edge.Origin(c.Request.Context())})
	if err != nil {
		s.securityRefused(c, v, err, "disable")
		return
	}
	clear := s.Cookies.ClearTrustDevice()
	http.SetCookie(c.Writer, &clear)
	shell.Done(c, securityPath, "totp-off")
}

// newBackupCodes replaces the backup codes
// (TwoFactorHandler.GenerateBackupCodes, as
// /api/auth/two-factor/generate-backup-codes) and shows the new ones in
// this answer only.
func (s *securitySection) newBackupCodes(c *gin.Context, v *shell.Visit) {
	pw, ok := s.twoFactorChange(c, v, "codes")
	if !ok {
		return
	}
	codes, err := s.twoFactor.GenerateBackupCodes(c.Request.Context(), mfa.TwoFactorPassword{Principal: v.P, Password: pw,
		Origin: edge.Origin(c.Request.Context())})
	if err != nil {
		s.securityRefused(c, v, err, "codes")
		return
	}
	p, sv, err := s.securityState(c, v)
	if err != nil {
		s.shell.Refuse(c, err)
		return
	}
	sv.Codes = codes
	p.Notice = "New backup codes: the old ones no longer work. They are shown only now."
	s.pages.security.Render(c, http.StatusOK, p, sv)
}
