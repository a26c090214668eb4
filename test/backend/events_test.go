package backend

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gatehouse/gatehouse/bootstrap"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/test/harness"
)

// keySecretInText finds a service key's secret anywhere in a text.
var keySecretInText = regexp.MustCompile(`gh_sk_[A-Za-z0-9]{43}`)

// mustEvents drains app's outbox and fails unless it held exactly the
// events of types want (in any order), none carrying a password or a
// service key's secret; it returns them by type.
func mustEvents(t testing.TB, app *harness.App, want ...string) map[string][]harness.OutboxEvent {
	t.Helper()
	evs := harness.DrainEvents(t, app)
	for _, e := range evs {
		b, _ := json.Marshal(e.Data)
		if strings.Contains(string(b), harness.UserPassword) || strings.Contains(string(b), harness.AdminPassword) || keySecretInText.Match(b) {
			t.Fatalf("%s carries a secret: %s", e.Type, b)
		}
	}
	var got []string
	byType := map[string][]harness.OutboxEvent{}
	for _, e := range evs {
		got = append(got, e.Type)
		byType[e.Type] = append(byType[e.Type], e)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}
	return byType
}

// mustData fails unless e's data has exactly keys, and field = value for
// each pair of fields.
func mustData(t testing.TB, e harness.OutboxEvent, keys []string, fields ...any) {
	t.Helper()
	harness.MustKeys(t, e.Data, keys...)
	for i := 0; i+1 < len(fields); i += 2 {
		if got := e.Data[fields[i].(string)]; got != fields[i+1] {
			t.Fatalf("%s data %s = %v, want %v", e.Type, fields[i], got, fields[i+1])
		}
	}
}

// The data keys of the events that have no trusted route of their own.
var (
	sessionEventFields = []string{"id", "userId", "createdAt", "expiresAt", "ipAddress", "userAgent", "authMethods", "impersonatedBy"}
	factorEventFields  = []string{"userId", "factor", "passkeyId"}
	orgEventFields     = []string{"id", "name", "slug", "logo", "metadata", "memberCount", "createdAt", "updatedAt", "requireTwoFactor"}
	memberEventFields  = []string{"id", "organizationId", "userId", "role", "createdAt", "user"}
	inviteEventFields  = []string{"id", "organizationId", "email", "role", "status", "inviterUserId", "expiresAt", "createdAt", "updatedAt"}
	linkedEventFields  = []string{"userId", "id", "providerId", "accountId", "email", "createdAt", "updatedAt"}
	keyEventFields     = []string{"id", "name", "maskedKey", "scopes", "createdBy", "createdAt", "expiresAt", "lastUsedAt", "revokedAt"}
	domainEventFields  = []string{"id", "hostname", "organizationId", "status", "attempts", "lastCheckedAt", "nextCheckAt", "verifiedAt", "failedAt",
		"manualVerificationReason", "createdAt", "updatedAt", "records"}
)

// Ensure each kind of change leaves exactly its events in the outbox, each
// carrying the object the trusted API shows for what changed, and never a
// secret.
func TestEvents_each_change_writes_its_events(t *testing.T) {
	// A fresh application: it drains every event the application writes.
	harness.ForStores(t, harness.StoresThatMatter, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, adminID := harness.MustAdmin(t, app)
		harness.DrainEvents(t, app)

		// Sign-up signs in (FwQuick): the user and their first session; the
		// commit signals this process's event relay.
		appended := app.App.Outbox.Appended(ports.OutboxEvents)
		select {
		case <-appended:
		default:
		}
		c := app.NewClient(t)
		up := harness.MustSignUp(t, c, "Ada", "ada@example.com", harness.UserPassword)
		select {
		case <-appended:
		default:
			t.Fatal("the events' commit did not signal the relay")
		}
		userID := harness.MustID(t, up["user"])
		evs := mustEvents(t, app, "user.created", "session.created")
		mustData(t, evs["user.created"][0], harness.BackendUserFields, "id", userID, "email", "ada@example.com", "passkeys", 0.0)
		mustData(t, evs["session.created"][0], sessionEventFields, "userId", userID, "impersonatedBy", nil)
		firstSession := evs["session.created"][0].Data["id"]

		// Sign-out revokes that session; sign-in starts another.
		harness.MustOK(t, c.Post("/api/auth/sign-out", "{}"))
		mustData(t, mustEvents(t, app, "session.revoked")["session.revoked"][0], sessionEventFields, "id", firstSession, "userId", userID)
		harness.MustSignIn(t, c, "ada@example.com", harness.UserPassword)
		mustData(t, mustEvents(t, app, "session.created")["session.created"][0], sessionEventFields, "userId", userID)

		// Service keys: created and revoked, never with their secret.
		key := harness.MustCreateKey(t, admin, map[string]any{"name": "events", "scopes": []string{"organizations:write", "domains:write"}})
		keyID := harness.MustID(t, key)
		created := mustEvents(t, app, "service_key.created")["service_key.created"][0]
		mustData(t, created, keyEventFields, "id", keyID, "revokedAt", nil)
		spare := harness.MustID(t, harness.MustCreateKey(t, admin, map[string]any{"name": "spare", "scopes": []string{"users:read"}}))
		mustEvents(t, app, "service_key.created")
		harness.MustStatus(t, admin.Do(http.MethodDelete, harness.ServiceKeysPath+"/"+spare, "", "Origin", app.Cfg.HTTP.BaseURL), http.StatusNoContent)
		revoked := mustEvents(t, app, "service_key.revoked")["service_key.revoked"][0]
		mustData(t, revoked, keyEventFields, "id", spare)
		if revoked.Data["revokedAt"] == nil {
			t.Fatalf("service_key.revoked data %v has no revokedAt", revoked.Data)
		}

		// An organization, a member added, an invitation.
		k := harness.KeyClient{T: t, C: app.NewClient(t), Headers: []string{"Authorization", "Bearer " + key["secret"].(string)}}
		org := mustCreateTrustedOrg(t, k, "Acme", "acme", userID)
		orgID := harness.MustID(t, org)
		evs = mustEvents(t, app, "organization.created", "member.added")
		mustData(t, evs["organization.created"][0], orgEventFields, "id", orgID, "memberCount", 1.0)
		mustData(t, evs["member.added"][0], memberEventFields, "organizationId", orgID, "userId", userID, "role", "owner")
		harness.MustStatus(t, k.Do(http.MethodPost, harness.OrgsPath+"/"+orgID+"/members", map[string]any{"userId": adminID, "role": "member"}), http.StatusCreated)
		mustData(t, mustEvents(t, app, "member.added")["member.added"][0], memberEventFields, "userId", adminID, "role", "member")
		r := k.Do(http.MethodPost, harness.OrgsPath+"/"+orgID+"/invitations", map[string]any{"email": "bob@example.com", "role": "member"})
		harness.MustStatus(t, r, http.StatusCreated)
		mustData(t, mustEvents(t, app, "invitation.created")["invitation.created"][0], inviteEventFields,
			"id", harness.MustID(t, r.JSON(t)), "email", "bob@example.com", "status", "pending")

		// A domain.
		r = k.Do(http.MethodPost, harness.DomainsPath, map[string]any{"hostname": "shop.example.com", "organizationId": orgID})
		harness.MustStatus(t, r, http.StatusCreated)
		mustData(t, mustEvents(t, app, "domain.created")["domain.created"][0], domainEventFields,
			"id", harness.MustID(t, r.JSON(t)), "hostname", "shop.example.com", "status", "pending", "organizationId", orgID)

		// Two-factor: sign-up, then the first code turns it on and rotates
		// the session.
		tf := harness.MustTwoFactorUser(t, app, "tess@example.com")
		evs = mustEvents(t, app, "user.created", "session.created", "factor.enabled", "session.created", "session.revoked")
		tessID := evs["user.created"][0].Data["id"]
		mustData(t, evs["factor.enabled"][0], factorEventFields, "userId", tessID, "factor", "totp", "passkeyId", nil)

		// Turning it off again.
		harness.MustOK(t, tf.C.Post("/api/auth/two-factor/disable", harness.MustJSON(t, map[string]any{"password": harness.TfPassword})))
		mustData(t, mustEvents(t, app, "factor.disabled")["factor.disabled"][0], factorEventFields, "userId", tessID, "factor", "totp")
	})
}

// Ensure a first sign-in at an upstream provider writes the new user and
// their linked account, and unlinking writes account.unlinked.
func TestEvents_first_federated_sign_in_links_an_account(t *testing.T) {
	for _, s := range harness.StoresThatMatter {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			// A world of its own: two applications, one the other's provider.
			w := harness.MustFedWorld(t, s, nil)
			harness.MustVerifiedUser(t, w.B, "Uma Upstream", "uma@upstream.example", harness.FedPassword)
			harness.DrainEvents(t, w.A)

			br := harness.NewStrictBrowser(t, w.A)
			w.SignInThroughB(t, br, "uma@upstream.example", map[string]any{"callbackURL": "/account"})
			evs := mustEvents(t, w.A, "user.created", "account.linked", "session.created")
			u := evs["user.created"][0]
			mustData(t, u, harness.BackendUserFields, "email", "uma@upstream.example", "emailVerified", true)
			linked, _ := u.Data["linkedAccounts"].([]any)
			if len(linked) != 1 {
				t.Fatalf("user.created linkedAccounts = %v, want the new account", u.Data["linkedAccounts"])
			}
			acct := evs["account.linked"][0]
			mustData(t, acct, linkedEventFields, "userId", u.Data["id"], "providerId", w.Provider, "id", harness.MustObject(t, linked[0])["id"])

			// An operator gives the user a password (which ends their
			// sessions), then unlinks the account.
			key := harness.MustCreateKey(t, w.AdminA, map[string]any{"name": "users", "scopes": []string{"users:write"}})
			k := harness.KeyClient{T: t, C: w.A.NewClient(t), Headers: []string{"Authorization", "Bearer " + key["secret"].(string)}}
			mustEvents(t, w.A, "service_key.created")
			harness.MustStatus(t, k.Do(http.MethodPut, harness.UsersPath+"/"+u.Data["id"].(string)+"/password", map[string]any{"password": "a new long passphrase 42"}), http.StatusNoContent)
			mustEvents(t, w.A, "session.revoked")
			harness.MustStatus(t, k.Do(http.MethodDelete, harness.UsersPath+"/"+u.Data["id"].(string)+"/linked-accounts/"+acct.Data["id"].(string), nil), http.StatusNoContent)
			mustData(t, mustEvents(t, w.A, "account.unlinked")["account.unlinked"][0], linkedEventFields, "id", acct.Data["id"], "userId", u.Data["id"])
		})
	}
}

// atomicityFault makes the writes of events, or of audit entries, fail
// while armed.
type atomicityFault struct {
	arm, disarm func()
}

// failingOutbox and failingAuditLog refuse every event and entry while
// armed: on the memory store they stand for a database refusing the row.
type failingOutbox struct {
	ports.Outbox
	armed *atomic.Bool
}

func (o failingOutbox) Append(ctx context.Context, m ports.OutboxMessage) error {
	if o.armed.Load() && m.Topic == ports.OutboxEvents {
		return errors.New("injected: the outbox refuses the event")
	}
	return o.Outbox.Append(ctx, m)
}

type failingAuditLog struct {
	ports.AuditLog
	armed *atomic.Bool
}

func (l failingAuditLog) Append(ctx context.Context, e domain.AuditEntry) error {
	if l.armed.Load() {
		return errors.New("injected: the audit log refuses the entry")
	}
	return l.AuditLog.Append(ctx, e)
}

// The triggers that refuse the rows on the SQL stores, per table.
var (
	sqliteFault = map[string]string{
		"event": `CREATE TRIGGER atomicity_fault BEFORE INSERT ON outbox_messages WHEN NEW.topic = 'event'
			BEGIN SELECT RAISE(ABORT, 'injected: the outbox refuses the event'); END`,
		"audit": `CREATE TRIGGER atomicity_fault BEFORE INSERT ON audit_log
			BEGIN SELECT RAISE(ABORT, 'injected: the audit log refuses the entry'); END`,
	}
	postgresFault = map[string]string{
		"event": `CREATE TRIGGER atomicity_fault BEFORE INSERT ON outbox_messages FOR EACH ROW WHEN (NEW.topic = 'event')
			EXECUTE FUNCTION atomicity_fault()`,
		"audit": `CREATE TRIGGER atomicity_fault BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION atomicity_fault()`,
	}
	faultTables = map[string]string{"event": "outbox_messages", "audit": "audit_log"}
)

// mustStartFaulty starts an app on s whose writes of what ("event" or
// "audit") fail while the fault is armed: through failing adapters on
// memory, through a trigger raising an error on SQLite and PostgreSQL.
func mustStartFaulty(t *testing.T, s harness.Store, what string) (*harness.App, atomicityFault) {
	t.Helper()
	// A fresh application: the fault breaks it.
	if s == harness.StoreMemory {
		armed := &atomic.Bool{}
		faults := bootstrap.Fakes{}
		if what == "event" {
			faults.Outbox = func(o ports.Outbox) ports.Outbox { return failingOutbox{Outbox: o, armed: armed} }
		} else {
			faults.AuditLog = func(l ports.AuditLog) ports.AuditLog { return failingAuditLog{AuditLog: l, armed: armed} }
		}
		app := harness.MustStartWith(t, s, harness.AdminEnv, faults)
		return app, atomicityFault{arm: func() { armed.Store(true) }, disarm: func() { armed.Store(false) }}
	}
	app := harness.MustStart(t, s, harness.AdminEnv)
	db := harness.MustDB(t, app)
	exec := func(sql string) {
		t.Helper()
		if err := db.Exec(sql).Error; err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	create := sqliteFault[what]
	if s == harness.StorePostgres {
		exec(`CREATE FUNCTION atomicity_fault() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN RAISE EXCEPTION 'injected: % refuses the row', TG_TABLE_NAME; END $$`)
		create = postgresFault[what]
	}
	drop := "DROP TRIGGER atomicity_fault"
	if s == harness.StorePostgres {
		drop += " ON " + faultTables[what]
	}
	return app, atomicityFault{arm: func() { exec(create) }, disarm: func() { exec(drop) }}
}

// mustInternalProblem fails unless r is a 500 problem that names nothing
// of the store.
func mustInternalProblem(t testing.TB, r *harness.Response) {
	t.Helper()
	harness.MustStatus(t, r, http.StatusInternalServerError)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Fatalf("Content-Type = %q, want a problem", ct)
	}
	body := strings.ToLower(string(r.Body))
	for _, internal := range []string{"injected", "outbox", "audit", "trigger", "sqlite", "sqlstate", "insert"} {
		if strings.Contains(body, internal) {
			t.Fatalf("the problem shows %q: %s", internal, r.Body)
		}
	}
}

// Ensure a change whose event, or whose audit entry, cannot be written is
// not kept: the trusted API answers 500 without internals, the user is not
// created, the organization keeps its name, no event and no success entry
// remain, on every store; once the store takes the rows again the same
// change succeeds with its event.
func TestEvents_a_change_without_its_event_or_audit_entry_is_not_kept(t *testing.T) {
	for _, s := range harness.StoresThatMatter {
		for _, what := range []string{"event", "audit"} {
			t.Run("store="+string(s)+"/fault="+what, func(t *testing.T) {
				t.Parallel()
				app, fault := mustStartFaulty(t, s, what)
				admin, _ := harness.MustAdmin(t, app)
				key := harness.MustCreateKey(t, admin, map[string]any{"name": "atomicity",
					"scopes": []string{"users:read", "users:write", "organizations:read", "organizations:write"}})
				keyID := harness.MustID(t, key)
				k := harness.KeyClient{T: t, C: app.NewClient(t), Headers: []string{"Authorization", "Bearer " + key["secret"].(string)}}
				owner := harness.MustCreateBackendUser(t, k, map[string]any{"email": "owner@example.com", "name": "Owner"})
				orgID := harness.MustID(t, mustCreateTrustedOrg(t, k, "Acme", "acme", harness.MustID(t, owner)))
				harness.DrainEvents(t, app)

				fault.arm()
				mustInternalProblem(t, k.Do(http.MethodPost, harness.UsersPath, map[string]any{"email": "new@example.com", "name": "New"}))
				mustInternalProblem(t, k.Do(http.MethodPatch, harness.OrgsPath+"/"+orgID, map[string]any{"name": "Renamed"}))
				mustInternalProblem(t, k.Do(http.MethodPost, harness.UsersPath+"/"+harness.MustID(t, owner)+"/ban", map[string]any{"reason": "spam"}))
				fault.disarm()

				if users, _ := harness.MustUserPage(t, k, url.Values{"email": {"new@example.com"}}); len(users) != 0 {
					t.Fatalf("the user was created without its %s: %v", what, users)
				}
				harness.MustTrustedOrg(t, k.Do(http.MethodGet, harness.OrgsPath+"/"+orgID, nil), http.StatusOK, "Acme")
				if got := mustBackendUserByID(t, k, harness.MustID(t, owner)); got["banned"] != false {
					t.Fatalf("the ban was kept without its %s: %v", what, got)
				}
				mustEvents(t, app)
				mustServiceKeyAudit(t, admin, keyID, orgID, "organizations.create")

				harness.MustCreateBackendUser(t, k, map[string]any{"email": "new@example.com", "name": "New"})
				mustData(t, mustEvents(t, app, "user.created")["user.created"][0], harness.BackendUserFields, "email", "new@example.com")
			})
		}
	}
}

// mustBackendUserByID reads a user through the trusted API.
func mustBackendUserByID(t testing.TB, k harness.KeyClient, id string) map[string]any {
	t.Helper()
	r := k.Do(http.MethodGet, harness.UsersPath+"/"+id, nil)
	harness.MustStatus(t, r, http.StatusOK)
	return r.JSON(t)
}
