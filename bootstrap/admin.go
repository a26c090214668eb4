package bootstrap

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/application/organization"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

// AdminConfig is the section of platform administration.
type AdminConfig struct {
	Emails           []string
	UserIDs          []string
	ImpersonationTTL time.Duration
	// RequireMFA refuses the administration routes to a platform
	// administrator without a second factor.
	RequireMFA bool
	// ConsoleIdleTimeout sends a console visitor idle that long back to
	// sign in for the console; their session lives on.
	ConsoleIdleTimeout time.Duration
}

var adminSettingList settingList

var (
	settingAdminEmails      = adminSettingList.add("GATEHOUSE_ADMIN_EMAILS", "admin-emails", "", "comma-separated addresses whose users are platform administrators once the address is verified")
	settingAdminUserIDs     = adminSettingList.add("GATEHOUSE_ADMIN_USER_IDS", "admin-user-ids", "", "comma-separated user ids that are platform administrators")
	settingImpersonationTTL = adminSettingList.add("GATEHOUSE_IMPERSONATION_TTL", "impersonation-ttl", "1h", "how long an administrator's impersonation session lasts")
	settingConsoleIdle      = adminSettingList.add("GATEHOUSE_CONSOLE_IDLE_TIMEOUT", "console-idle-timeout", "30m", "after this long without a console page or form, the admin console sends the administrator to sign in again (from 1s to 24h); their session and other sessions stay signed in")
	settingAdminRequireMFA  = adminSettingList.addBool("GATEHOUSE_ADMIN_REQUIRE_MFA", "admin-require-mfa", "", "refuse the administration routes (403 ADMIN_MFA_REQUIRED) to a platform administrator without a second factor, who may still enrol one (default true in production, false in development)")
)

func (a *AdminConfig) load(r *reader) {
	a.ImpersonationTTL = r.duration(settingImpersonationTTL, time.Minute, 24*time.Hour, "24h")
	a.ConsoleIdleTimeout = r.duration(settingConsoleIdle, time.Second, 24*time.Hour, "30m")
	for _, e := range r.list(settingAdminEmails) {
		email, err := domain.NewEmail(e)
		if err != nil {
			r.fail(settingAdminEmails, fmt.Sprintf("entry %q is not an e-mail address", e))
			continue
		}
		a.Emails = append(a.Emails, string(email))
	}
	a.UserIDs = r.list(settingAdminUserIDs)
	if r.text(settingAdminRequireMFA) == "" {
		a.RequireMFA = r.production()
	} else {
		a.RequireMFA = r.boolean(settingAdminRequireMFA)
	}
}

// OrganizationConfig is the section of organizations and their invitations.
type OrganizationConfig struct {
	InvitationTTL     time.Duration
	InvitationURL     string
	InvitationLimit   int
	MembershipLimit   int
	OrganizationLimit int
}

var organizationSettingList settingList

var (
	settingInvitationTTL     = organizationSettingList.add("GATEHOUSE_INVITATION_TTL", "invitation-ttl", "48h", "how long an organization invitation can be accepted")
	settingInvitationURL     = organizationSettingList.add("GATEHOUSE_INVITATION_URL", "invitation-url", "", "page of your application that accepts an invitation; {id} is replaced by its id (required in production; development default: BASE_URL/accept-invitation/{id})")
	settingInvitationLimit   = organizationSettingList.add("GATEHOUSE_INVITATION_LIMIT", "invitation-limit", "100", "most open invitations an organization may have")
	settingMembershipLimit   = organizationSettingList.add("GATEHOUSE_MEMBERSHIP_LIMIT", "membership-limit", "0", "most members an organization may have (0: no limit)")
	settingOrganizationLimit = organizationSettingList.add("GATEHOUSE_ORGANIZATION_LIMIT", "organization-limit", "0", "most organizations a user may belong to and still create another (0: no limit)")
)

// load reads the section. The invitation URL follows baseURL unless set;
// when the base URL is wrong (baseURL "") it is left empty and unchecked.
func (o *OrganizationConfig) load(r *reader, baseURL string) {
	o.InvitationTTL = r.duration(settingInvitationTTL, time.Minute, 90*24*time.Hour, "24h")
	o.InvitationLimit = r.integer(settingInvitationLimit, 1, 100000)
	o.MembershipLimit = r.integer(settingMembershipLimit, 0, 10000000)
	o.OrganizationLimit = r.integer(settingOrganizationLimit, 0, 100000)
	o.InvitationURL = r.text(settingInvitationURL)
	switch {
	case o.InvitationURL == "" && r.production():
		r.fail(settingInvitationURL, "must be set in production: invitation mails link to the page of your application that accepts them")
		return
	case o.InvitationURL == "" && baseURL == "":
		return // follows the base URL, which is wrong
	case o.InvitationURL == "":
		o.InvitationURL = baseURL + "/accept-invitation/{id}"
	}
	if u, err := url.Parse(o.InvitationURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || !strings.Contains(o.InvitationURL, "{id}") {
		r.fail(settingInvitationURL, "must be an absolute http(s) URL containing {id}")
	}
}

// adminSettings turns the configuration into the rules of administration.
func adminSettings(c Config) usecase.AdminSettings {
	return usecase.AdminSettings{Admins: platformAdmins(c), ImpersonationTTL: c.Admin.ImpersonationTTL, RequireMFA: c.Admin.RequireMFA}
}

// platformAdmins are the administrators named by the configuration.
func platformAdmins(c Config) domain.PlatformAdmins {
	var a domain.PlatformAdmins
	for _, e := range c.Admin.Emails {
		a.Emails = append(a.Emails, domain.Email(e))
	}
	for _, id := range c.Admin.UserIDs {
		a.UserIDs = append(a.UserIDs, domain.UserID(id))
	}
	return a
}

// organizationSettings turns the configuration into the rules of organizations.
func organizationSettings(c Config) organization.OrganizationSettings {
	o := c.Organizations
	return organization.OrganizationSettings{
		InvitationTTL: o.InvitationTTL, InvitationLimit: o.InvitationLimit, MembershipLimit: o.MembershipLimit,
		OrganizationLimit: o.OrganizationLimit, InvitationURL: o.InvitationURL, Admins: platformAdmins(c),
	}
}
