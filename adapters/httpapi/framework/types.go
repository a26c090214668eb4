package framework

import (
	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/domain"
)

// UserJSON is a user as the framework returns it (Better Auth's user object).
type UserJSON struct {
	ID            string  `json:"id" doc:"The user's identifier." example:"0192f5e4-8a4b-7cc1-9a51-0b3c8d9e1f20"`
	Name          string  `json:"name" doc:"Display name." example:"Ada Lovelace"`
	Email         string  `json:"email" format:"email" doc:"The address, lower-cased." example:"ada@example.com"`
	EmailVerified bool    `json:"emailVerified" doc:"Whether the user proved they own the address."`
	Image         *string `json:"image" nullable:"true" doc:"Avatar URL, or null." example:"https://example.com/ada.png"`
	CreatedAt     string  `json:"createdAt" format:"date-time" doc:"When the user was created (milliseconds, UTC)." example:"2026-11-21T09:30:00.000Z"`
	UpdatedAt     string  `json:"updatedAt" format:"date-time" doc:"When the user last changed." example:"2026-11-21T09:30:00.000Z"`
	Role          string  `json:"role" doc:"Platform roles, comma-separated (admin plugin): user or admin." example:"user"`
	Banned        bool    `json:"banned" doc:"Whether the user is banned."`
	BanReason     *string `json:"banReason" nullable:"true" doc:"Why the user was banned, or null."`
	BanExpires    *string `json:"banExpires" nullable:"true" format:"date-time" doc:"When the ban lifts, or null for never (or not banned)."`
	// TwoFactorEnabled is Better Auth's twoFactor plugin field.
	TwoFactorEnabled bool `json:"twoFactorEnabled" doc:"Whether sign-in asks for a second factor (two-factor plugin)."`
}

func userJSON(u *domain.User) UserJSON {
	a := u.Access()
	out := UserJSON{ID: string(u.ID()), Name: u.Name(), Email: string(u.Email()), EmailVerified: u.EmailVerified(),
		CreatedAt: edge.JSDate(u.CreatedAt()), UpdatedAt: edge.JSDate(u.UpdatedAt()),
		Role: domain.JoinPlatformRoles(a.Roles), Banned: a.Banned, TwoFactorEnabled: u.TwoFactorEnabled()}
	if img := u.Image(); img != "" {
		out.Image = &img
	}
	if a.Banned {
		if a.BanReason != "" {
			out.BanReason = &a.BanReason
		}
		if !a.BanExpires.IsZero() {
			exp := edge.JSDate(a.BanExpires)
			out.BanExpires = &exp
		}
	}
	return out
}

// SessionJSON is a session as the framework returns it. Its token field is
// the session's public handle, never its bearer token: a script that reads
// it (or a user listing their devices) cannot replay it. revoke-session
// accepts it.
type SessionJSON struct {
	ID        string `json:"id" doc:"The session's identifier." example:"0192f5e4-9b1c-7d2e-8f30-4a5b6c7d8e9f"`
	Token     string `json:"token" doc:"The session's public handle (equal to id), accepted by revoke-session. Not a bearer token." example:"0192f5e4-9b1c-7d2e-8f30-4a5b6c7d8e9f"`
	UserID    string `json:"userId" doc:"Whose session it is."`
	ExpiresAt string `json:"expiresAt" format:"date-time" doc:"When the session ends unless refreshed." example:"2026-11-28T09:30:00.000Z"`
	CreatedAt string `json:"createdAt" format:"date-time" doc:"When the user signed in." example:"2026-11-21T09:30:00.000Z"`
	UpdatedAt string `json:"updatedAt" format:"date-time" doc:"When the session was last refreshed." example:"2026-11-21T09:30:00.000Z"`
	IPAddress string `json:"ipAddress" doc:"The client address it was created from." example:"203.0.113.7"`
	UserAgent string `json:"userAgent" doc:"The User-Agent it was created with." example:"Mozilla/5.0"`
	// ActiveOrganizationID and ImpersonatedBy are the organization and admin plugins' session fields.
	ActiveOrganizationID *string `json:"activeOrganizationId" nullable:"true" doc:"The organization the session works in, or null."`
	ImpersonatedBy       *string `json:"impersonatedBy" nullable:"true" doc:"The administrator impersonating the user in this session, or null."`
	// AuthMethods and SecondFactorAt are Gatehouse's: how the user signed in.
	AuthMethods    []string `json:"authMethods" doc:"How the user proved who they are in this session, as RFC 8176 amr values: pwd (password), otp (a TOTP, backup or e-mailed code), hwk or swk (a device-bound or synced passkey), user (the authenticator verified the user), mfa (more than one factor). Empty for an impersonation." example:"[\"pwd\",\"otp\",\"mfa\"]"`
	SecondFactorAt *string  `json:"secondFactorAt" nullable:"true" format:"date-time" doc:"When a second factor or a passkey was last proven in this session (sign-in or step-up), or null."`
}

func sessionJSON(s *domain.Session) SessionJSON {
	out := SessionJSON{ID: string(s.ID()), Token: string(s.ID()), UserID: string(s.UserID()),
		ExpiresAt: edge.JSDate(s.ExpiresAt()), CreatedAt: edge.JSDate(s.CreatedAt()), UpdatedAt: edge.JSDate(s.UpdatedAt()),
		IPAddress: s.IPAddress(), UserAgent: s.UserAgent()}
	a := s.Authentication()
	out.AuthMethods = a.MethodNames()
	if a.HasSecondFactor() {
		at := edge.JSDate(a.SecondFactorAt)
		out.SecondFactorAt = &at
	}
	if org := s.ActiveOrganizationID(); org != "" {
		id := string(org)
		out.ActiveOrganizationID = &id
	}
	if by := s.ImpersonatedBy(); by != "" {
		id := string(by)
		out.ImpersonatedBy = &id
	}
	return out
}
