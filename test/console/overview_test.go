package console

import (
	"fmt"
	"maps"
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/test/harness"
)

// overviewBody is GET /api/admin/overview's answer.
type overviewBody struct {
	At             time.Time      `json:"at"`
	Users          int            `json:"users"`
	Organizations  int            `json:"organizations"`
	Domains        map[string]int `json:"domains"`
	ActiveSessions int            `json:"activeSessions"`
	SignIns        struct {
		Hourly []signInBucket `json:"hourly"`
		Daily  []signInBucket `json:"daily"`
	} `json:"signIns"`
	RecentAudit []struct {
		Action   string `json:"action"`
		TargetID string `json:"targetId"`
	} `json:"recentAudit"`
}

type signInBucket struct {
	Start     time.Time `json:"start"`
	Succeeded int       `json:"succeeded"`
	Failed    int       `json:"failed"`
}

// mustOverview reads the overview as c.
func mustOverview(t *testing.T, c *harness.Client) overviewBody {
	t.Helper()
	r := c.Get("/api/admin/overview")
	harness.MustStatus(t, r, http.StatusOK)
	var o overviewBody
	harness.MustUnmarshal(t, r.Body, &o)
	if len(o.SignIns.Hourly) != 24 || len(o.SignIns.Daily) != 30 {
		t.Fatalf("%d hours and %d days, want 24 and 30", len(o.SignIns.Hourly), len(o.SignIns.Daily))
	}
	if last := o.SignIns.Hourly[23].Start; !last.Equal(o.At.Truncate(time.Hour)) {
		t.Fatalf("the last hour starts at %v, want the hour of %v", last, o.At)
	}
	if today := o.SignIns.Daily[29].Start; !today.Equal(o.At.UTC().Truncate(24 * time.Hour)) {
		t.Fatalf("the last day starts at %v, want the day of %v", today, o.At)
	}
	return o
}

// recentSignIns sums the last two buckets of series: the current one, and
// the one before in case the test crossed into a new hour or day.
func recentSignIns(series []signInBucket) (succeeded, failed int) {
	for _, b := range series[len(series)-2:] {
		succeeded += b.Succeeded
		failed += b.Failed
	}
	return succeeded, failed
}

// mustRecentSignIns fails unless the overview's current hour and day (with
// the one before) count succeeded and failed sign-ins.
func mustRecentSignIns(t *testing.T, o overviewBody, succeeded, failed int) {
	t.Helper()
	for name, series := range map[string][]signInBucket{"hourly": o.SignIns.Hourly, "daily": o.SignIns.Daily} {
		if s, f := recentSignIns(series); s != succeeded || f != failed {
			t.Errorf("%s: %d succeeded, %d failed; want %d, %d", name, s, f, succeeded, failed)
		}
	}
}

// Ensure the overview counts the users, organizations, domains and active
// sessions, the sign-ins of the current hour and day (an unknown address
// counted as a failure like a wrong password), and lists the latest audit
// entries first.
func TestOverview_counts_and_sign_ins(t *testing.T) {
	t.Parallel()
	// A fresh application: it counts everything the application holds.
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		bob, _ := harness.MustPlainUser(t, app, "Bob", "bob@example.com", harness.UserPassword)
		_, carolID := harness.MustPlainUser(t, app, "Carol", "carol@example.com", harness.UserPassword)
		harness.MustCreateOrg(t, bob, "Acme", "acme")
		before := mustOverview(t, admin)
		if s, f := recentSignIns(before.SignIns.Hourly); s != 0 || f != 0 {
			t.Fatalf("before any sign-in: %d succeeded, %d failed", s, f)
		}
		for range 2 {
			harness.MustSignIn(t, app.NewClient(t), "bob@example.com", harness.UserPassword)
		}
		harness.MustSignInFails(t, app, "bob@example.com", "not bob's password")
		harness.MustSignInFails(t, app, "bob@example.com", "still not bob's password")
		harness.MustSignInFails(t, app, "nobody@example.com", harness.UserPassword)
		harness.MustOK(t, admin.Post(harness.AdminPath("ban-user"), harness.MustJSON(t, map[string]any{"userId": carolID})))

		o := mustOverview(t, admin)
		mustRecentSignIns(t, o, 2, 3)
		// The sessions: the administrator's, Bob's and Carol's sign-ups
		// (Carol's went with her ban), Bob's two sign-ins.
		if o.Users != 3 || o.Organizations != 1 || o.ActiveSessions != 4 {
			t.Errorf("%d users, %d organizations, %d active sessions; want 3, 1, 4", o.Users, o.Organizations, o.ActiveSessions)
		}
		if want := map[string]int{"pending": 0, "verified": 0, "failed": 0}; !maps.Equal(o.Domains, want) {
			t.Errorf("domains = %v, want %v", o.Domains, want)
		}
		if len(o.RecentAudit) == 0 || o.RecentAudit[0].Action != "admin.ban-user" || o.RecentAudit[0].TargetID != carolID {
			t.Errorf("recent audit = %+v, want Carol's ban first", o.RecentAudit)
		}
	})
}

// Ensure the overview needs a platform administrator's session: 401
// without one, 403 for a plain user.
func TestOverview_refuses_anonymous_and_plain_users(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		harness.MustProblem(t, app.NewClient(t).Get("/api/admin/overview"), http.StatusUnauthorized, "auth.unauthenticated")
		bob, _ := harness.MustPlainUser(t, app, "Bob", harness.Email(t, "bob@example.com"), harness.UserPassword)
		harness.MustProblem(t, bob.Get("/api/admin/overview"), http.StatusForbidden, "auth.not_platform_admin")
	})
}

// Ensure two instances on one database count their sign-ins into one
// series, which both show once each has written its counts.
func TestOverview_two_instances_count_into_one_series(t *testing.T) {
	t.Parallel()
	for _, s := range harness.SQLOnly(harness.StoresThatMatter) {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			// Fresh applications: two instances on a database of their own, counted.
			a := harness.MustStart(t, s, harness.AdminEnv)
			b := harness.MustStart(t, s, harness.Env(harness.AdminEnv, map[string]string{"GATEHOUSE_DATABASE_URL": a.DatabaseURL}))
			admin, _ := harness.MustAdmin(t, a)
			harness.MustPlainUser(t, a, "Bob", "bob@example.com", harness.UserPassword)
			harness.MustSignIn(t, a.NewClient(t), "bob@example.com", harness.UserPassword)
			harness.MustSignIn(t, b.NewClient(t), "bob@example.com", harness.UserPassword)
			harness.MustSignInFails(t, b, "bob@example.com", "not bob's password")
			harness.MustSignInFails(t, a, "nobody@example.com", harness.UserPassword)
			harness.MustSignInFails(t, b, "nobody@example.com", harness.UserPassword)
			adminOnB := b.NewClient(t)
			adminOnB.Cookies = maps.Clone(admin.Cookies)
			// Each instance gathers its counts in memory and writes them
			// every two seconds (a job these in-process instances do not
			// run) and before it reads the overview: once both have read
			// it, each shows both instances' sign-ins.
			mustOverview(t, adminOnB)
			mustOverview(t, admin)
			for name, c := range map[string]*harness.Client{"a": admin, "b": adminOnB} {
				t.Run(fmt.Sprintf("instance=%s", name), func(t *testing.T) {
					mustRecentSignIns(t, mustOverview(t, c), 2, 3)
				})
			}
		})
	}
}
