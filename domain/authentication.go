package domain

import (
	"slices"
	"strings"
	"time"
)

// AuthMethod is a way a user proved who they are, named as RFC 8176 names
// authentication method references (the "amr" claim).
type AuthMethod string

// The authentication methods Gatehouse records.
const (
	// MethodPassword is a password (RFC 8176 "pwd").
	MethodPassword AuthMethod = "pwd"
	// MethodOTP is a one-time code: a TOTP code, a backup code or an
	// e-mailed code (RFC 8176 "otp").
	MethodOTP AuthMethod = "otp"
	// MethodHardwareKey is proof of possession of a device-bound key, a
	// passkey that cannot leave its authenticator (RFC 8176 "hwk").
	MethodHardwareKey AuthMethod = "hwk"
	// MethodSoftwareKey is proof of possession of a key that may be copied,
	// a synced passkey (RFC 8176 "swk").
	MethodSoftwareKey AuthMethod = "swk"
	// MethodUserVerification is the authenticator's check that the user is
	// there and is who enrolled it (WebAuthn user verification; RFC 8176
	// "user").
	MethodUserVerification AuthMethod = "user"
	// MethodMultiFactor says that more than one factor was used (RFC 8176
	// "mfa").
	MethodMultiFactor AuthMethod = "mfa"
)

// The authentication context classes a session can meet (the "acr" claim).
const (
	// ACRPassword is a single factor.
	ACRPassword = "urn:gatehouse:acr:pwd"
	// ACRMultiFactor is more than one factor (NIST SP 800-63B AAL2).
	ACRMultiFactor = "urn:gatehouse:acr:mfa"
	// ACRPhishingResistant is a passkey: a phishing-resistant possession
	// factor with user verification.
	ACRPhishingResistant = "urn:gatehouse:acr:phr"
)

// Authentication is how a session's user proved who they are: the methods
// used, and when a second factor (or a passkey) was last proven in the
// session, for step-up.
type Authentication struct {
	// Methods are the methods used, in the order they were first used,
	// each once; MethodMultiFactor is among them whenever a second factor
	// is.
	Methods []AuthMethod
	// SecondFactorAt is when a second factor or a passkey was last proven
	// in the session; zero if never.
	SecondFactorAt time.Time
}

// PasswordAuthentication is a sign-in with a password alone.
func PasswordAuthentication() Authentication {
	return Authentication{Methods: []AuthMethod{MethodPassword}}
}

// SecondFactorAuthentication is a password sign-in whose second factor,
// method, was proven at at.
func SecondFactorAuthentication(method AuthMethod, at time.Time) Authentication {
	a := PasswordAuthentication()
	a.Prove(method, at)
	return a
}

// PasskeyAuthentication is a sign-in with a passkey at at: possession of a
// key (synced or device-bound) and user verification, which together are
// multi-factor.
func PasskeyAuthentication(synced bool, at time.Time) Authentication {
	key := MethodHardwareKey
	if synced {
		key = MethodSoftwareKey
	}
	return Authentication{Methods: []AuthMethod{key, MethodUserVerification, MethodMultiFactor}, SecondFactorAt: Timestamp(at)}
}

// Prove records that method was proven at at as a further factor: the
// session then has a second factor, proven at at.
func (a *Authentication) Prove(method AuthMethod, at time.Time) {
	a.add(method)
	a.add(MethodMultiFactor)
	a.SecondFactorAt = Timestamp(at)
}

func (a *Authentication) add(m AuthMethod) {
	if !slices.Contains(a.Methods, m) {
		a.Methods = append(a.Methods, m)
	}
}

// HasSecondFactor reports whether more than one factor was proven.
func (a Authentication) HasSecondFactor() bool { return !a.SecondFactorAt.IsZero() }

// SecondFactorWithin reports whether a second factor was proven less than
// window before now.
func (a Authentication) SecondFactorWithin(now time.Time, window time.Duration) bool {
	return a.HasSecondFactor() && now.Sub(a.SecondFactorAt) < window
}

// PhishingResistant reports whether a passkey was used.
func (a Authentication) PhishingResistant() bool {
	return slices.Contains(a.Methods, MethodHardwareKey) || slices.Contains(a.Methods, MethodSoftwareKey)
}

// ACR returns the strongest authentication context class the session
// meets.
func (a Authentication) ACR() string {
	switch {
	case a.PhishingResistant():
		return ACRPhishingResistant
	case a.HasSecondFactor():
		return ACRMultiFactor
	default:
		return ACRPassword
	}
}

// Meets reports whether the session meets the authentication context class
// acr; an unknown class is never met.
func (a Authentication) Meets(acr string) bool {
	switch acr {
	case ACRPassword:
		return true
	case ACRMultiFactor:
		return a.HasSecondFactor()
	case ACRPhishingResistant:
		return a.PhishingResistant()
	default:
		return false
	}
}

// KnownACR reports whether acr is a class Gatehouse knows.
func KnownACR(acr string) bool {
	return acr == ACRPassword || acr == ACRMultiFactor || acr == ACRPhishingResistant
}

// MethodNames returns the methods as strings, for tokens and answers; never
// nil.
func (a Authentication) MethodNames() []string {
	out := make([]string, 0, len(a.Methods))
	for _, m := range a.Methods {
		out = append(out, string(m))
	}
	return out
}

// EncodeMethods is the stored form of the methods: space-separated.
func (a Authentication) EncodeMethods() string {
	return strings.Join(a.MethodNames(), " ")
}

// DecodeMethods reads EncodeMethods' form, in one allocation: every
// session lookup runs it.
func DecodeMethods(s string) []AuthMethod {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	out := make([]AuthMethod, 0, strings.Count(s, " ")+1)
	for s != "" {
		var f string
		f, s, _ = strings.Cut(s, " ")
		if f != "" {
			out = append(out, AuthMethod(f))
		}
	}
	return out
}

// normalised is a with its time truncated as stored and its methods copied.
func (a Authentication) normalised() Authentication {
	a.Methods = slices.Clone(a.Methods)
	if !a.SecondFactorAt.IsZero() {
		a.SecondFactorAt = Timestamp(a.SecondFactorAt)
	}
	return a
}

// Authentication returns how the user proved who they are in the session.
func (s *Session) Authentication() Authentication { return s.auth.normalised() }

// Authenticate records how the user proved who they are, when the session
// starts.
func (s *Session) Authenticate(a Authentication) { s.auth = a.normalised() }

// ProveSecondFactor records a second factor, method, proven in the session
// at now (step-up, or enrolment confirmed).
func (s *Session) ProveSecondFactor(method AuthMethod, now time.Time) {
	s.auth.Prove(method, now)
	s.auth = s.auth.normalised()
	s.updatedAt = Timestamp(now)
}

// ProvePasskey records a passkey proven in the session at now.
func (s *Session) ProvePasskey(synced bool, now time.Time) {
	p := PasskeyAuthentication(synced, now)
	for _, m := range p.Methods {
		s.auth.add(m)
	}
	s.auth.SecondFactorAt = p.SecondFactorAt
	s.updatedAt = Timestamp(now)
}
