package mfa_test

import (
	"encoding/base32"
	"net/url"
	"testing"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/adapters/passwordhash"
	"github.com/gatehouse/gatehouse/adapters/signingkeys"
	"github.com/gatehouse/gatehouse/adapters/system"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/mfa"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

// tfWorld is a memory world whose sign-in asks for a second factor, with a
// user who enabled and confirmed TOTP.
type tfWorld struct {
	*usecasetest.World
	tf      *mfa.TwoFactor
	signIn  *account.SignIns
	p       usecase.Principal
	secret  []byte
	backups []string
}

func newTFWorld(t *testing.T) *tfWorld {
	t.Helper()
	w := &tfWorld{World: usecasetest.NewWorld(t, false)}
	sealer, err := signingkeys.NewSecretSealer(nil)
	if err != nil {
		t.Fatal(err)
	}
	sessions, links := memory.NewSessionRepository(w.DB), memory.NewVerificationRepository(w.DB)
	challenges := memory.NewMFAChallengeRepository(w.DB)
	hasher := passwordhash.New(passwordhash.Params{MemoryKiB: 1024, Iterations: 1, Parallelism: 1}, 4)
	tokens, ids := system.NewTokenGenerator(), system.NewIDGenerator()
	w.tf = mfa.NewTwoFactor(w.Users, w.Creds, memory.NewTwoFactorRepository(w.DB), challenges, links, w.Mail, sealer, sessions,
		hasher, memory.NewPasskeyRepository(w.DB), tokens, ids, w.Clock, w.AuditorOf(memory.NewAuditLog(w.DB)), w.Settings)
	w.signIn = w.SignIns.UseSecondFactor(challenges)
	up := w.MustSignUp(t, "ada@example.com")
	w.p = usecase.Principal{User: up.User, Session: up.Session}
	return w
}

// enable enrols the user and confirms with the current code.
func (w *tfWorld) enable(t *testing.T) {
	t.Helper()
	res, err := w.tf.Enable(t.Context(), mfa.EnableTwoFactor{Principal: w.p, Password: usecasetest.Password})
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(res.TOTPURI)
	if err != nil {
		t.Fatal(err)
	}
	if w.secret, err = base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(u.Query().Get("secret")); err != nil {
		t.Fatal(err)
	}
	w.backups = res.BackupCodes
	v, err := w.tf.VerifyTOTP(t.Context(), mfa.VerifySecondFactor{Principal: &w.p, Code: w.code()})
	if err != nil {
		t.Fatal(err)
	}
	// The first accepted code rotated the session, and stepped it up: later
	// changes in it are not asked for a fresh second factor.
	w.p = usecase.Principal{User: v.User, Session: v.Session}
	w.Clock.Advance(domain.TOTPPeriod)
}

func (w *tfWorld) code() string {
	return domain.TOTPCode(w.secret, domain.TOTPStep(w.Clock.Now()), domain.TOTPDigits)
}

// challenge signs in with the password and returns the challenge id.
func (w *tfWorld) challenge(t *testing.T) string {
	t.Helper()
	res, err := w.signIn.SignIn(t.Context(), account.SignIn{Email: "ada@example.com", Password: usecasetest.Password})
	if err != nil {
		t.Fatal(err)
	}
	if res.TwoFactorChallenge == "" || res.Session != nil {
		t.Fatalf("sign-in = %+v, want a challenge and no session", res)
	}
	return res.TwoFactorChallenge
}

func (w *tfWorld) answer(t *testing.T, id, code string) error {
	t.Helper()
	_, err := w.tf.VerifyTOTP(t.Context(), mfa.VerifySecondFactor{ChallengeID: id, Code: code})
	return err
}

func TestTwoFactor_rules(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, w *tfWorld)
	}{
		{"enable_needs_the_password", func(t *testing.T, w *tfWorld) {
			_, err := w.tf.Enable(t.Context(), mfa.EnableTwoFactor{Principal: w.p, Password: "wrong password"})
			usecasetest.MustCode(t, err, "auth.wrong_password")
		}},
		{"on_only_after_the_first_code", func(t *testing.T, w *tfWorld) {
			if _, err := w.tf.Enable(t.Context(), mfa.EnableTwoFactor{Principal: w.p, Password: usecasetest.Password}); err != nil {
				t.Fatal(err)
			}
			res, err := w.signIn.SignIn(t.Context(), account.SignIn{Email: "ada@example.com", Password: usecasetest.Password})
			if err != nil || res.Session == nil {
				t.Fatalf("sign-in before the first code = %+v, %v; want a session", res, err)
			}
		}},
		{"enable_again_when_on", func(t *testing.T, w *tfWorld) {
			w.enable(t)
			u, _ := w.Users.Get(t.Context(), w.p.User.ID())
			_, err := w.tf.Enable(t.Context(), mfa.EnableTwoFactor{Principal: usecase.Principal{User: u, Session: w.p.Session}, Password: usecasetest.Password})
			usecasetest.MustCode(t, err, "mfa.totp_already_enabled")
		}},
		{"right_code_starts_a_session", func(t *testing.T, w *tfWorld) {
			w.enable(t)
			res, err := w.tf.VerifyTOTP(t.Context(), mfa.VerifySecondFactor{ChallengeID: w.challenge(t), Code: w.code()})
			if err != nil || !res.NewSession || res.Token == "" {
				t.Fatalf("verify = %+v, %v", res, err)
			}
		}},
		{"code_refused_on_reuse", func(t *testing.T, w *tfWorld) {
			w.enable(t)
			code := w.code()
			if err := w.answer(t, w.challenge(t), code); err != nil {
				t.Fatal(err)
			}
			usecasetest.MustCode(t, w.answer(t, w.challenge(t), code), "mfa.invalid_code")
		}},
		{"five_failures_end_the_challenge", func(t *testing.T, w *tfWorld) {
			w.enable(t)
			id := w.challenge(t)
			for range usecase.MFAMaxAttempts - 1 {
				usecasetest.MustCode(t, w.answer(t, id, "000000"), "mfa.invalid_code")
				// Keep the account lockout (threshold 3) out of this rule.
				if err := w.Creds.Update(t.Context(), w.p.User.ID(), func(c *domain.Credential) error { c.RecordSuccess(w.Clock.Now()); return nil }); err != nil {
					t.Fatal(err)
				}
			}
			usecasetest.MustCode(t, w.answer(t, id, "000000"), "mfa.too_many_attempts")
			usecasetest.MustCode(t, w.answer(t, id, w.code()), "mfa.invalid_challenge")
		}},
		{"failures_count_towards_the_lockout", func(t *testing.T, w *tfWorld) {
			w.enable(t)
			for range w.Settings.Lockout.Threshold {
				usecasetest.MustCode(t, w.answer(t, w.challenge(t), "000000"), "mfa.invalid_code")
			}
			_, err := w.signIn.SignIn(t.Context(), account.SignIn{Email: "ada@example.com", Password: usecasetest.Password})
			usecasetest.MustCode(t, err, "auth.invalid_credentials")
		}},
		{"locked_account_refuses_the_right_code", func(t *testing.T, w *tfWorld) {
			w.enable(t)
			id := w.challenge(t)
			for range w.Settings.Lockout.Threshold - 1 {
				usecasetest.MustCode(t, w.answer(t, id, "000000"), "mfa.invalid_code")
			}
			id2 := w.challenge(t)
			usecasetest.MustCode(t, w.answer(t, id2, "000000"), "mfa.invalid_code")
			usecasetest.MustCode(t, w.answer(t, id2, w.code()), "mfa.account_locked")
		}},
		{"challenge_expires", func(t *testing.T, w *tfWorld) {
			w.enable(t)
			id := w.challenge(t)
			w.Clock.Advance(usecase.MFAChallengeTTL)
			usecasetest.MustCode(t, w.answer(t, id, w.code()), "mfa.invalid_challenge")
		}},
		{"backup_code_single_use", func(t *testing.T, w *tfWorld) {
			w.enable(t)
			verify := func() error {
				_, err := w.tf.VerifyBackupCode(t.Context(), mfa.VerifySecondFactor{ChallengeID: w.challenge(t), Code: w.backups[0]})
				return err
			}
			if err := verify(); err != nil {
				t.Fatal(err)
			}
			usecasetest.MustCode(t, verify(), "mfa.invalid_backup_code")
		}},
		{"trusted_device_skips_the_challenge_once", func(t *testing.T, w *tfWorld) {
			w.enable(t)
			res, err := w.tf.VerifyTOTP(t.Context(), mfa.VerifySecondFactor{ChallengeID: w.challenge(t), Code: w.code(), TrustDevice: true})
			if err != nil || res.TrustToken == "" {
				t.Fatalf("verify with trustDevice = %+v, %v", res, err)
			}
			in := account.SignIn{Email: "ada@example.com", Password: usecasetest.Password, TrustedDevice: res.TrustToken}
			first, err := w.signIn.SignIn(t.Context(), in)
			if err != nil || first.Session == nil || first.TrustToken == "" {
				t.Fatalf("trusted sign-in = %+v, %v", first, err)
			}
			again, err := w.signIn.SignIn(t.Context(), in)
			if err != nil || again.TwoFactorChallenge == "" || !again.TrustRefused {
				t.Fatalf("sign-in with a used trust token = %+v, %v; want a challenge", again, err)
			}
			w.Clock.Advance(usecase.TrustDeviceTTL)
			in.TrustedDevice = first.TrustToken
			if late, err := w.signIn.SignIn(t.Context(), in); err != nil || late.TwoFactorChallenge == "" {
				t.Fatalf("sign-in with an expired trust token = %+v, %v; want a challenge", late, err)
			}
		}},
		{"emailed_code_works_once_and_expires", func(t *testing.T, w *tfWorld) {
			w.enable(t)
			id := w.challenge(t)
			otp := func(id, code string) error {
				_, err := w.tf.VerifyOTP(t.Context(), mfa.VerifySecondFactor{ChallengeID: id, Code: code})
				return err
			}
			usecasetest.MustCode(t, otp(id, "123456"), "mfa.otp_expired")
			if err := w.tf.SendOTP(t.Context(), id, nil); err != nil {
				t.Fatal(err)
			}
			code := w.Mail.Last(t, domain.MailTwoFactorCode).Code
			w.Clock.Advance(mfa.EmailOTPTTL)
			usecasetest.MustCode(t, otp(id, code), "mfa.otp_expired")
			if err := w.tf.SendOTP(t.Context(), id, nil); err != nil {
				t.Fatal(err)
			}
			code = w.Mail.Last(t, domain.MailTwoFactorCode).Code
			if err := otp(id, code); err != nil {
				t.Fatal(err)
			}
			usecasetest.MustCode(t, otp(id, code), "mfa.invalid_challenge")
			usecasetest.MustCode(t, w.tf.SendOTP(t.Context(), id, nil), "mfa.invalid_challenge")
		}},
		{"changes_need_a_factor_proven_within_the_window", func(t *testing.T, w *tfWorld) {
			w.enable(t) // the enrolment's code stepped the session up
			w.Clock.Advance(w.Settings.StepUpWindow)
			pw := mfa.TwoFactorPassword{Principal: w.p, Password: usecasetest.Password}
			usecasetest.MustCode(t, w.tf.Disable(t.Context(), pw), "mfa.step_up_required")
			_, err := w.tf.GenerateBackupCodes(t.Context(), pw)
			usecasetest.MustCode(t, err, "mfa.step_up_required")
			_, err = w.tf.TOTPURI(t.Context(), pw)
			usecasetest.MustCode(t, err, "mfa.step_up_required")
			// A wrong password is not even tried: no lockout count.
			usecasetest.MustCode(t, w.tf.Disable(t.Context(), mfa.TwoFactorPassword{Principal: w.p, Password: "wrong password"}), "mfa.step_up_required")
			cred, err := w.Creds.Get(t.Context(), w.p.User.ID())
			if err != nil {
				t.Fatal(err)
			}
			if n := cred.FailedAttempts(); n != 0 {
				t.Fatalf("failed attempts after refused changes = %d, want 0", n)
			}
			res, err := w.tf.VerifyTOTP(t.Context(), mfa.VerifySecondFactor{Principal: &w.p, Code: w.code()})
			if err != nil {
				t.Fatal(err)
			}
			w.p.Session = res.Session
			if _, err := w.tf.TOTPURI(t.Context(), mfa.TwoFactorPassword{Principal: w.p, Password: usecasetest.Password}); err != nil {
				t.Fatalf("get-totp-uri after stepping up: %v", err)
			}
			if err := w.tf.Disable(t.Context(), mfa.TwoFactorPassword{Principal: w.p, Password: usecasetest.Password}); err != nil {
				t.Fatalf("disable after stepping up: %v", err)
			}
		}},
		{"disable_needs_the_password", func(t *testing.T, w *tfWorld) {
			w.enable(t)
			usecasetest.MustCode(t, w.tf.Disable(t.Context(), mfa.TwoFactorPassword{Principal: w.p, Password: "wrong password"}), "auth.wrong_password")
			if err := w.tf.Disable(t.Context(), mfa.TwoFactorPassword{Principal: w.p, Password: usecasetest.Password}); err != nil {
				t.Fatal(err)
			}
			res, err := w.signIn.SignIn(t.Context(), account.SignIn{Email: "ada@example.com", Password: usecasetest.Password})
			if err != nil || res.Session == nil {
				t.Fatalf("sign-in after disable = %+v, %v; want a session", res, err)
			}
		}},
		{"backup_codes_need_two_factor_on", func(t *testing.T, w *tfWorld) {
			_, err := w.tf.GenerateBackupCodes(t.Context(), mfa.TwoFactorPassword{Principal: w.p, Password: usecasetest.Password})
			usecasetest.MustCode(t, err, "mfa.two_factor_not_enabled")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, newTFWorld(t)) })
	}
}
