package framework

import (
	"context"
	"errors"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/mfa"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// The two-factor plugin's routes (Better Auth 1.7.25's twoFactor, design
// note better-auth-multi-factor-wire §1): enable, get-totp-uri,
// verify-totp, verify-backup-code, generate-backup-codes and disable. The
// verify routes answer either for the signed-in user or for the pending
// challenge of a password sign-in, carried by the signed two_factor cookie.
// With trustDevice, the challenge's answer also sets the signed
// trust_device cookie, which skips the challenge at the next sign-ins for
// 30 days. send-otp mails a one-time code for the pending challenge or the
// signed-in session, and verify-otp answers with it.

// twoFactorMethods are the second factors sign-in offers: TOTP and the
// e-mailed code (backup codes are never listed, as in Better Auth).
var twoFactorMethods = []string{"totp", "otp"}

// TwoFactorEnableInput starts two-factor enrolment.
type TwoFactorEnableInput struct {
	Body struct {
		Password string `json:"password" maxLength:"4096" doc:"The account's password."`
		Issuer   string `json:"issuer,omitempty" maxLength:"256" doc:"The name an authenticator app shows (default the product name)."`
		Method   string `json:"method,omitempty" enum:"totp,otp" doc:"totp (default): an authenticator app, on after the first accepted code. otp: e-mailed codes, on at once (the session is rotated)."`
	}
}

// TwoFactorEnableOutput is the key URI to scan and the backup codes, shown
// once (totp), or only the method (otp, with the rotated session's cookie).
type TwoFactorEnableOutput struct {
	edge.SessionHeaders
	Body struct {
		Method      string   `json:"method" enum:"totp,otp" example:"totp"`
		TOTPURI     string   `json:"totpURI,omitempty" doc:"totp only: the otpauth:// URI an authenticator app scans." example:"otpauth://totp/Gatehouse:ada%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Gatehouse&digits=6&period=30"`
		BackupCodes []string `json:"backupCodes,omitempty" doc:"totp only: ten single-use recovery codes; stored hashed, shown only now." example:"[\"K96RJ-bGbB4\"]"`
	}
}

// stepUpNote ends the description of every route that asks for a fresh
// second factor (usecase.StepUp).
const stepUpNote = " Step-up: a user with a second factor (two-factor or a passkey) must have proven one in this session within " +
	"GATEHOUSE_STEP_UP_WINDOW (default 10 minutes), else 403 SECOND_FACTOR_REQUIRED before anything is checked or changed; " +
	"answer verify-totp, verify-backup-code or a passkey in the session, then try again."

func (s *API) twoFactorEnable(ctx context.Context, in *TwoFactorEnableInput) (*TwoFactorEnableOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	res, err := s.TwoFactor.Enable(ctx, mfa.EnableTwoFactor{Principal: p, Password: in.Body.Password, Issuer: in.Body.Issuer,
		Method: in.Body.Method, Client: edge.RequestInfoFrom(ctx).Client(), Origin: edge.Origin(ctx)})
	if err != nil {
		return nil, err
	}
	out := &TwoFactorEnableOutput{}
	out.Body.Method, out.Body.TOTPURI, out.Body.BackupCodes = res.Method, res.TOTPURI, res.BackupCodes
	if r := res.Rotated; r != nil {
		out.SignIn(s.Cookies, r.Token, r.Session)
	}
	return out, nil
}

// TwoFactorPasswordInput is a two-factor change proven by the password.
type TwoFactorPasswordInput struct {
	Body struct {
		Password string `json:"password" maxLength:"4096" doc:"The account's password."`
	}
}

// TwoFactorURIOutput is the key URI of the user's factor.
type TwoFactorURIOutput struct {
	Body struct {
		TOTPURI string `json:"totpURI" doc:"The otpauth:// URI an authenticator app scans."`
	}
}

func (s *API) twoFactorURI(ctx context.Context, in *TwoFactorPasswordInput) (*TwoFactorURIOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	uri, err := s.TwoFactor.TOTPURI(ctx, mfa.TwoFactorPassword{Principal: p, Password: in.Body.Password})
	if err != nil {
		return nil, err
	}
	out := &TwoFactorURIOutput{}
	out.Body.TOTPURI = uri
	return out, nil
}

// TwoFactorBackupCodesOutput is a new set of backup codes.
type TwoFactorBackupCodesOutput struct {
	Body struct {
		Status      bool     `json:"status" example:"true"`
		BackupCodes []string `json:"backupCodes" doc:"Ten new single-use codes; the old ones no longer work."`
	}
}

func (s *API) twoFactorBackupCodes(ctx context.Context, in *TwoFactorPasswordInput) (*TwoFactorBackupCodesOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	codes, err := s.TwoFactor.GenerateBackupCodes(ctx, mfa.TwoFactorPassword{Principal: p, Password: in.Body.Password, Origin: edge.Origin(ctx)})
	if err != nil {
		return nil, err
	}
	out := &TwoFactorBackupCodesOutput{}
	out.Body.Status, out.Body.BackupCodes = true, codes
	return out, nil
}

func (s *API) twoFactorDisable(ctx context.Context, in *TwoFactorPasswordInput) (*edge.StatusOutput, error) {
	p, err := s.Principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.TwoFactor.Disable(ctx, mfa.TwoFactorPassword{Principal: p, Password: in.Body.Password, Origin: edge.Origin(ctx)}); err != nil {
		return nil, err
	}
	out := edge.StatusOK()
	out.SetCookie = append(out.SetCookie, s.Cookies.ClearTrustDevice())
	return out, nil
}

// TwoFactorVerifyInput answers a second factor.
type TwoFactorVerifyInput struct {
	Body struct {
		Code           string `json:"code" maxLength:"64" doc:"The code: six digits from the authenticator app, or a backup code."`
		TrustDevice    bool   `json:"trustDevice,omitempty" doc:"After a sign-in challenge: this browser skips the second factor for 30 days (the trust_device cookie)."`
		DisableSession bool   `json:"disableSession,omitempty" doc:"verify-backup-code only: accepted and ignored."`
	}
}

// TwoFactorVerifyOutput is the session the answer opens (or the current one).
type TwoFactorVerifyOutput struct {
	edge.SessionHeaders
	Body struct {
		Token string   `json:"token" doc:"The session token: a new one after a sign-in challenge, else the current one."`
		User  UserJSON `json:"user"`
	}
}

func (s *API) twoFactorVerifyTOTP(ctx context.Context, in *TwoFactorVerifyInput) (*TwoFactorVerifyOutput, error) {
	return s.twoFactorVerify(ctx, in, s.TwoFactor.VerifyTOTP)
}

func (s *API) twoFactorVerifyOTP(ctx context.Context, in *TwoFactorVerifyInput) (*TwoFactorVerifyOutput, error) {
	return s.twoFactorVerify(ctx, in, s.TwoFactor.VerifyOTP)
}

// TwoFactorSendOTPInput asks for an e-mailed code; the body may be {}.
type TwoFactorSendOTPInput struct {
	Body *struct {
		TrustDevice bool `json:"trustDevice,omitempty" doc:"Accepted and ignored, as Better Auth does; give it to verify-otp."`
	}
}

func (s *API) twoFactorSendOTP(ctx context.Context, _ *TwoFactorSendOTPInput) (*edge.StatusOutput, error) {
	r := edge.RequestInfoFrom(ctx).Request
	// A pending sign-in challenge first, as in twoFactorVerify; else the
	// signed-in user's session.
	challenge := s.Cookies.TwoFactorChallenge(r)
	var principal *usecase.Principal
	if challenge == "" {
		if p, err := s.Principal(ctx); err == nil {
			principal = &p
		} else if domain.KindOf(err) != domain.KindUnauthenticated {
			return nil, err
		}
	}
	if err := s.TwoFactor.SendOTP(ctx, challenge, principal); err != nil {
		return nil, err
	}
	return edge.StatusOK(), nil
}

func (s *API) twoFactorVerifyBackupCode(ctx context.Context, in *TwoFactorVerifyInput) (*TwoFactorVerifyOutput, error) {
	return s.twoFactorVerify(ctx, in, s.TwoFactor.VerifyBackupCode)
}

// twoFactorVerify answers for the signed-in user when there is a session,
// else for the challenge of the two_factor cookie; the cookie is expired
// when the challenge ends (answered, exhausted or gone).
func (s *API) twoFactorVerify(ctx context.Context, in *TwoFactorVerifyInput,
	verify func(context.Context, mfa.VerifySecondFactor) (*mfa.VerifySecondFactorResult, error)) (*TwoFactorVerifyOutput, error) {
	ri := edge.RequestInfoFrom(ctx)
	cmd := mfa.VerifySecondFactor{Code: in.Body.Code, TrustDevice: in.Body.TrustDevice, Client: ri.Client(), Origin: edge.Origin(ctx)}
	token, _ := s.Cookies.Token(ri.Request)
	// A pending challenge is answered first: verify-otp has no session
	// path, and a sign-in's answer must not touch another session.
	if cmd.ChallengeID = s.Cookies.TwoFactorChallenge(ri.Request); cmd.ChallengeID == "" {
		if p, err := s.Principal(ctx); err == nil {
			cmd.Principal = &p
		} else if domain.KindOf(err) != domain.KindUnauthenticated {
			return nil, err
		}
	}
	res, err := verify(ctx, cmd)
	if err != nil {
		if cmd.Principal == nil && (errors.Is(err, mfa.ErrTooManyAttempts) || errors.Is(err, mfa.ErrInvalidChallenge)) {
			clear := s.Cookies.ClearTwoFactor()
			return nil, huma.ErrorWithHeaders(edge.RenderError(ctx, edge.LoggerFrom(ctx), err), http.Header{"Set-Cookie": {clear.String()}})
		}
		return nil, err
	}
	out := &TwoFactorVerifyOutput{}
	out.Body.User = userJSON(res.User)
	if res.NewSession {
		out.Body.Token = res.Token
		out.SignIn(s.Cookies, res.Token, res.Session)
		out.SetCookie = append(out.SetCookie, s.Cookies.ClearTwoFactor())
		if res.TrustToken != "" {
			out.SetCookie = append(out.SetCookie, s.Cookies.TrustDeviceCookie(res.TrustToken, usecase.TrustDeviceTTL))
		}
	} else if res.Rotated {
		// Two-factor turned on: the session was replaced (Better Auth
		// answers the old token here; the new one is the one that works).
		out.Body.Token = res.Token
		out.SignIn(s.Cookies, res.Token, res.Session)
	} else {
		out.Body.Token = token
	}
	return out, nil
}

// AddTwoFactorRoutes registers the two-factor plugin's routes in the
// framework and auth contracts. Enrolment and its changes need a session;
// the verify routes take a session or the two_factor cookie, under the
// credentials rate rule. All are cookie-bearing POSTs, so the origin check
// applies.
func (s *API) AddTwoFactorRoutes() {
	type op = huma.Operation
	const tag = "Two-factor"
	base := func(o op) op {
		o.Path = edge.FrameworkBase + "/two-factor" + o.Path
		o.Method = http.MethodPost
		o.Tags = []string{tag}
		o.Errors = append(o.Errors, http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests)
		return o
	}
	signedIn := func(o op) op {
		o.Security = edge.SessionSecurity
		return edge.WithRate(base(o), edge.RateCredentials)
	}
	// The answers are also the second-factor page's forms (edge.TwoFactorForm).
	answer := func(o op) op { return edge.WithForm(edge.WithRate(base(o), edge.RateCredentials), edge.TwoFactorForm) }
	fw := edge.ContractFramework

	edge.Add(s.routes, fw, signedIn(op{OperationID: "twoFactorEnable", Path: "/enable", Summary: "Enable two-factor",
		Description: "Checks the password and returns a new TOTP key URI and ten backup codes. Two-factor turns on with the first accepted " +
			"verify-totp code; enabling again before that replaces the secret, after it answers 400 TOTP_ALREADY_ENABLED. With method otp, " +
			"two-factor turns on at once with e-mailed codes as the second factor, answers {method: otp}, and replaces the session (new " +
			"cookie and set-auth-token; the old token stops working). Audited when two-factor turns on."}),
		s.twoFactorEnable, edge.ContractAuth)
	edge.Add(s.routes, fw, signedIn(op{OperationID: "twoFactorGetTotpUri", Path: "/get-totp-uri", Summary: "TOTP key URI",
		Description: "Checks the password and returns the key URI of the user's TOTP factor (400 TOTP_NOT_ENABLED without one). The URI holds the secret." + stepUpNote}),
		s.twoFactorURI, edge.ContractAuth)
	edge.Add(s.routes, fw, signedIn(op{OperationID: "twoFactorGenerateBackupCodes", Path: "/generate-backup-codes", Summary: "New backup codes",
		Description: "Checks the password and replaces the backup codes with ten new ones (400 TWO_FACTOR_NOT_ENABLED while two-factor is off). Audited." + stepUpNote}),
		s.twoFactorBackupCodes, edge.ContractAuth)
	edge.Add(s.routes, fw, signedIn(op{OperationID: "twoFactorDisable", Path: "/disable", Summary: "Disable two-factor",
		Description: "Checks the password, removes the TOTP factor and the backup codes, forgets every trusted browser of the user, and turns two-factor off. Audited." + stepUpNote}),
		s.twoFactorDisable, edge.ContractAuth)
	edge.Add(s.routes, fw, answer(op{OperationID: "twoFactorVerifyTotp", Path: "/verify-totp", Summary: "Answer with a TOTP code",
		Description: "With a session: confirms enrolment (the first accepted code turns two-factor on, is audited, and replaces the session: " +
			"the answer carries the new token and cookie, and the old token stops working) or steps the session up. " +
			"With the two_factor cookie of a sign-in: starts the session. A code is accepted once (a replay answers 401 INVALID_CODE); " +
			"a challenge takes five wrong answers, the fifth answers 400 TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE and ends it; " +
			"wrong answers count towards the account lockout (429 ACCOUNT_TEMPORARILY_LOCKED)."}),
		s.twoFactorVerifyTOTP, edge.ContractAuth)
	edge.Add(s.routes, fw, edge.WithPolicy(edge.WithRate(base(op{OperationID: "twoFactorSendOtp", Path: "/send-otp", Summary: "Mail a sign-in code",
		Description: "Mails a six-digit code for the pending challenge of the two_factor cookie or, without one, for the signed-in session " +
			"(it works for 3 minutes and replaces an earlier one; after five wrong answers a session waits for it to expire: 429). " +
			"401 INVALID_TWO_FACTOR_COOKIE without a live challenge or a session."}), edge.RateMail), edge.FormPage(edge.TwoFactorSendForm)),
		s.twoFactorSendOTP, edge.ContractAuth)
	edge.Add(s.routes, fw, answer(op{OperationID: "twoFactorVerifyOtp", Path: "/verify-otp", Summary: "Answer with the e-mailed code",
		Description: "Answers the challenge of the two_factor cookie with the code send-otp mailed and starts the session; or, in a session, " +
			"steps it up (for a user with two-factor off, turns it on with e-mailed codes and replaces the session, as Better Auth does). " +
			"A code works once. 400 OTP_HAS_EXPIRED when no live code was sent; a wrong code counts as in verify-totp."}),
		s.twoFactorVerifyOTP, edge.ContractAuth)
	edge.Add(s.routes, fw, answer(op{OperationID: "twoFactorVerifyBackupCode", Path: "/verify-backup-code", Summary: "Answer with a backup code",
		Description: "As verify-totp, with a single-use backup code (401 INVALID_BACKUP_CODE when unknown or used)."}),
		s.twoFactorVerifyBackupCode, edge.ContractAuth)
}
