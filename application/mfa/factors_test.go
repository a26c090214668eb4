package mfa_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/memory"
	"github.com/gatehouse/gatehouse/application/account"
	"github.com/gatehouse/gatehouse/application/mfa"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/usecasetest"
)

func TestFactors_reset(t *testing.T) {
	w := usecasetest.NewAdminWorld(t)
	factors, passkeys := memory.NewTwoFactorRepository(w.DB), memory.NewPasskeyRepository(w.DB)
	trust := memory.NewVerificationRepository(w.DB)
	f := mfa.NewFactors(w.Admin, w.Users, factors, passkeys, trust, memory.NewSessionRepository(w.DB), w.Mail, w.Passwords, w.Auditor, w.Clock)
	boss := w.SignedIn(t, "boss@example.com")
	ada, adaToken := w.SignedInWithToken(t, "ada@example.com")
	ctx, id, now := t.Context(), ada.User.ID(), w.Clock.Now()

	// Ada has every factor: TOTP, backup codes, a passkey, a trusted
	// browser, and two-factor on.
	tf, err := domain.NewTOTPFactor(id, []byte("sealed"), now)
	if err != nil {
		t.Fatal(err)
	}
	if err := factors.SaveTOTP(ctx, tf); err != nil {
		t.Fatal(err)
	}
	if err := factors.ReplaceBackupCodes(ctx, id, [][]byte{domain.HashBackupCode("aaaaa-bbbbb")}, now); err != nil {
		t.Fatal(err)
	}
	if err := passkeys.Create(ctx, domain.PasskeyCredential{ID: []byte("pk"), UserID: id, PublicKey: []byte{1}, Transports: []string{}, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := trust.Create(ctx, domain.NewVerification("v-1", domain.PurposeTrustDevice, "trust-hash", id, ada.User.Email(), time.Hour, now)); err != nil {
		t.Fatal(err)
	}
	if err := w.Users.Update(ctx, id, func(u *domain.User) error { u.SetTwoFactorEnabled(true, now); return nil }); err != nil {
		t.Fatal(err)
	}
	got, err := f.GetUser(ctx, usecasetest.KeyReq(domain.ScopeUsersRead), id)
	if err != nil || got.Passkeys != 1 || !got.User.TwoFactorEnabled() {
		t.Fatalf("GetUser = %+v, %v; want two-factor on and one passkey", got, err)
	}

	// Refused: a user without the permission, a key without the scope.
	eve := w.SignedIn(t, "eve@example.com")
	usecasetest.MustCode(t, f.ResetFactors(ctx, usecase.AdminRequest{Principal: eve}, id), "admin.update_user_forbidden")
	usecasetest.MustCode(t, f.ResetFactors(ctx, usecasetest.KeyReq(domain.ScopeUsersRead), id), "auth.insufficient_scope")
	usecasetest.MustCode(t, f.ResetFactors(ctx, usecase.AdminRequest{Principal: boss}, "nobody"), "admin.user_not_found")

	if err := f.ResetFactors(ctx, usecase.AdminRequest{Principal: boss, RequestID: "r-1"}, id); err != nil {
		t.Fatal(err)
	}
	if _, err := factors.GetTOTP(ctx, id); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("TOTP factor after the reset: %v", err)
	}
	if n, _ := factors.CountUnusedBackupCodes(ctx, id); n != 0 {
		t.Errorf("%d backup codes after the reset", n)
	}
	if n, _ := passkeys.CountByUser(ctx, id); n != 0 {
		t.Errorf("%d passkeys after the reset", n)
	}
	if _, err := trust.Consume(ctx, domain.PurposeTrustDevice, "trust-hash"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("trusted browser after the reset: %v", err)
	}
	if u, _ := w.Users.Get(ctx, id); u.TwoFactorEnabled() {
		t.Error("two-factor still on after the reset")
	}
	_, err = w.Sessions.Authenticate(ctx, account.Authenticate{Token: adaToken})
	usecasetest.MustCode(t, err, "UNAUTHORIZED")
	if m := w.Mail.Last(t, domain.MailFactorsReset); m.To != ada.User.Email() {
		t.Errorf("factors-reset mail to %s", m.To)
	}

	// Again, by a key: nothing left, so no mail, but audited.
	if err := f.ResetFactors(ctx, usecasetest.KeyReq(domain.ScopeUsersWrite), id); err != nil {
		t.Fatal(err)
	}
	if n := w.Mail.Count(domain.MailFactorsReset); n != 1 {
		t.Errorf("%d factors-reset mails, want 1", n)
	}
	byAdmin, byKey := w.Entries(t, "admin.reset-user-factors"), w.Entries(t, "users.reset-factors")
	if len(byAdmin) != 3 || byAdmin[0].Outcome != domain.OutcomeSuccess || byAdmin[0].ActorID != string(boss.User.ID()) ||
		byAdmin[0].RequestID != "r-1" || byAdmin[0].TargetID != string(id) {
		t.Fatalf("administrator entries = %+v", byAdmin)
	}
	if len(byKey) != 2 || byKey[0].Outcome != domain.OutcomeSuccess || byKey[0].ActorType != domain.ActorServiceKey ||
		byKey[1].Outcome != domain.OutcomeDenied {
		t.Fatalf("key entries = %+v", byKey)
	}
}

// Ensure an operator's "send a password reset" mails the user a link now,
// is refused to a user without the permission and for an unknown user, and
// that every call is audited.
func TestFactors_send_password_reset(t *testing.T) {
	w := usecasetest.NewAdminWorld(t)
	f := mfa.NewFactors(w.Admin, w.Users, memory.NewTwoFactorRepository(w.DB), memory.NewPasskeyRepository(w.DB),
		memory.NewVerificationRepository(w.DB), memory.NewSessionRepository(w.DB), w.Mail, w.Passwords, w.Auditor, w.Clock)
	boss, ada, eve := w.SignedIn(t, "boss@example.com"), w.SignedIn(t, "ada@example.com"), w.SignedIn(t, "eve@example.com")
	ctx, id := t.Context(), ada.User.ID()

	usecasetest.MustCode(t, f.SendPasswordReset(ctx, usecase.AdminRequest{Principal: eve}, id, ""), "admin.update_user_forbidden")
	usecasetest.MustCode(t, f.SendPasswordReset(ctx, usecase.AdminRequest{Principal: boss}, "nobody", ""), "admin.user_not_found")
	if n := w.Mail.Count(domain.MailResetPassword); n != 0 {
		t.Fatalf("%d reset mails after two refusals", n)
	}
	if err := f.SendPasswordReset(ctx, usecase.AdminRequest{Principal: boss, RequestID: "r-2"}, id, "https://app.example.com/after"); err != nil {
		t.Fatal(err)
	}
	if m := w.Mail.Last(t, domain.MailResetPassword); m.To != ada.User.Email() || m.Link == "" {
		t.Fatalf("reset mail = %+v", m)
	}
	entries := w.Entries(t, "admin.send-password-reset")
	if len(entries) != 3 || entries[0].Outcome != domain.OutcomeSuccess || entries[0].RequestID != "r-2" ||
		entries[0].ActorID != string(boss.User.ID()) || entries[0].TargetID != string(id) {
		t.Fatalf("entries = %+v", entries)
	}
}
