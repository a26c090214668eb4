package domain

import (
	"errors"
	"testing"
	"time"
)

func TestPlatformAdmins(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	newUser := func(t *testing.T, id, email string) *User {
		t.Helper()
		u, err := NewUser(UserID(id), "Ada", Email(email), now)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	admins := PlatformAdmins{UserIDs: []UserID{"configured"}, Emails: []Email{"boss@example.com"}}
	ban := Permissions{"user": {"ban"}}

	plain := newUser(t, "u1", "ada@example.com")
	if admins.IsAdmin(plain) || admins.Allows(plain, ban) {
		t.Fatal("a plain user is an administrator")
	}
	if got := JoinPlatformRoles(plain.Roles()); got != "user" {
		t.Fatalf("new user's role = %q, want user", got)
	}

	byRole := newUser(t, "u2", "grace@example.com")
	if err := byRole.SetRoles([]PlatformRole{"user", "admin", "admin"}, now); err != nil {
		t.Fatal(err)
	}
	if got := JoinPlatformRoles(byRole.Roles()); got != "user,admin" {
		t.Fatalf("roles = %q, want user,admin (deduplicated, in order)", got)
	}
	if !admins.IsAdmin(byRole) || !admins.Allows(byRole, ban) {
		t.Fatal("a user with the admin role is not an administrator")
	}
	if admins.Allows(byRole, Permissions{"user": {"impersonate-admins"}}) {
		t.Fatal("impersonate-admins is granted to nobody")
	}
	if admins.Allows(byRole, Permissions{}) || admins.Allows(byRole, Permissions{"user": {}}) {
		t.Fatal("an empty request must never pass")
	}

	byID := newUser(t, "configured", "id@example.com")
	if !admins.IsAdmin(byID) || !admins.Allows(byID, Permissions{"session": {"revoke", "list"}}) {
		t.Fatal("a configured id is not an administrator")
	}

	byEmail := newUser(t, "u3", "boss@example.com")
	if admins.IsAdmin(byEmail) {
		t.Fatal("a configured address counts before it is verified")
	}
	byEmail.MarkEmailVerified(now)
	if !admins.IsAdmin(byEmail) {
		t.Fatal("a verified configured address is not an administrator")
	}

	for _, bad := range [][]PlatformRole{{"owner"}, {"admin", "root"}, {}, {" "}} {
		err := plain.SetRoles(bad, now)
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("SetRoles(%q) = %v, want an invalid error", bad, err)
		}
	}
	if got := JoinPlatformRoles(plain.Roles()); got != "user" {
		t.Fatalf("a refused SetRoles changed the roles to %q", got)
	}
}

func TestOrgRoles(t *testing.T) {
	cases := []struct {
		roles []OrgRole
		perms Permissions
		want  bool
	}{
		{[]OrgRole{OrgRoleOwner}, Permissions{"organization": {"delete"}}, true},
		{[]OrgRole{OrgRoleAdmin}, Permissions{"organization": {"delete"}}, false},
		{[]OrgRole{OrgRoleAdmin}, Permissions{"organization": {"update"}, "member": {"delete"}}, true},
		{[]OrgRole{OrgRoleMember}, Permissions{"invitation": {"create"}}, false},
		{[]OrgRole{OrgRoleMember}, Permissions{"ac": {"read"}}, true},
		{[]OrgRole{OrgRoleMember, OrgRoleAdmin}, Permissions{"invitation": {"cancel"}}, true},
		{[]OrgRole{OrgRoleAdmin}, Permissions{"organization": {"update", "delete"}}, false},
		{[]OrgRole{"intruder"}, Permissions{"ac": {"read"}}, false},
	}
	for _, c := range cases {
		if got := OrgRolesAllow(c.roles, c.perms); got != c.want {
			t.Errorf("OrgRolesAllow(%v, %v) = %v, want %v", c.roles, c.perms, got, c.want)
		}
	}
	if _, err := ParseOrgRoles([]string{"member", "superuser"}); err == nil {
		t.Fatal("an unknown organization role was accepted")
	}
	got, err := ParseOrgRoles([]string{" admin", "member", "admin"})
	if err != nil || JoinOrgRoles(got) != "admin,member" {
		t.Fatalf("ParseOrgRoles = %v, %v; want admin,member", got, err)
	}
	if s := SplitOrgRoles(" owner, ,admin "); JoinOrgRoles(s) != "owner,admin" {
		t.Fatalf("SplitOrgRoles = %v", s)
	}
}

func TestUserBan(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	u, _ := NewUser("u1", "Ada", "ada@example.com", now)
	if err := u.Ban("spam", now.Add(-time.Second), now); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a ban expiring in the past: %v, want invalid", err)
	}
	if u.IsBanned(now) {
		t.Fatal("a refused ban banned the user")
	}
	if err := u.Ban("  spam  ", now.Add(time.Hour), now); err != nil {
		t.Fatal(err)
	}
	if !u.IsBanned(now) || u.IsBanned(now.Add(time.Hour)) {
		t.Fatal("a one-hour ban must hold now and lift after an hour")
	}
	if a := u.Access(); a.BanReason != "spam" || !a.BanExpires.Equal(now.Add(time.Hour)) {
		t.Fatalf("access = %+v", a)
	}
	if err := u.Ban("", time.Time{}, now); err != nil || !u.IsBanned(now.Add(1000*time.Hour)) {
		t.Fatalf("a ban without expiry must hold: %v", err)
	}
	u.Unban(now)
	if a := u.Access(); u.IsBanned(now) || a.Banned || a.BanReason != "" || !a.BanExpires.IsZero() {
		t.Fatalf("after Unban: %+v", a)
	}
}
