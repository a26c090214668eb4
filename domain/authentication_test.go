package domain_test

import (
	"slices"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

func TestAuthentication_methods_round_trip(t *testing.T) {
	for _, in := range []string{"", "pwd", "pwd otp mfa", "  hwk  user mfa "} {
		got := domain.Authentication{Methods: domain.DecodeMethods(in)}.EncodeMethods()
		want := ""
		for _, m := range domain.DecodeMethods(in) {
			if want != "" {
				want += " "
			}
			want += string(m)
		}
		if got != want {
			t.Fatalf("%q: encode(decode) = %q, want %q", in, got, want)
		}
	}
	if got := domain.DecodeMethods("  hwk  user mfa "); !slices.Equal(got, []domain.AuthMethod{"hwk", "user", "mfa"}) {
		t.Fatalf("DecodeMethods = %v", got)
	}
	if domain.DecodeMethods("   ") != nil {
		t.Fatal("blank methods decode to a slice")
	}
}

func TestAuthentication_classes(t *testing.T) {
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	pwd := domain.PasswordAuthentication()
	otp := domain.SecondFactorAuthentication(domain.MethodOTP, now)
	key := domain.PasskeyAuthentication(false, now)
	for _, c := range []struct {
		a    domain.Authentication
		acr  string
		meet []bool // pwd, mfa, phr
	}{
		{pwd, domain.ACRPassword, []bool{true, false, false}},
		{otp, domain.ACRMultiFactor, []bool{true, true, false}},
		{key, domain.ACRPhishingResistant, []bool{true, true, true}},
	} {
		if c.a.ACR() != c.acr {
			t.Fatalf("%v: ACR = %s, want %s", c.a.Methods, c.a.ACR(), c.acr)
		}
		for i, class := range []string{domain.ACRPassword, domain.ACRMultiFactor, domain.ACRPhishingResistant} {
			if c.a.Meets(class) != c.meet[i] {
				t.Fatalf("%v meets %s = %v", c.a.Methods, class, !c.meet[i])
			}
		}
	}
	if !otp.SecondFactorWithin(now.Add(9*time.Minute), 10*time.Minute) || otp.SecondFactorWithin(now.Add(10*time.Minute), 10*time.Minute) {
		t.Fatal("the step-up window is not half-open at its end")
	}
	if got := otp.MethodNames(); !slices.Equal(got, []string{"pwd", "otp", "mfa"}) {
		t.Fatalf("password then code = %v", got)
	}
	if (domain.Authentication{}).Meets("urn:other") {
		t.Fatal("an unknown class was met")
	}
}
