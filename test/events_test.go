package test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/bootstrap"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// The transactional outbox, from outside: every change writes its events
// in its own transaction, read here from the store's outbox as the relays
// read them; and a change whose event or audit entry cannot be written is
// not kept at all.

// outboxEvent is an event waiting in the outbox, as its webhook carries it.
type outboxEvent struct {
	ID        string
	Type      string         `json:"type"`
	Timestamp string         `json:"timestamp"`
	Data      map[string]any `json:"data"`
	// Actor is set only for a change made through an impersonation.
	Actor map[string]any `json:"actor"`
}

// drainEvents takes every event waiting in app's outbox, oldest first, and
// removes them, checking each payload's shape.
func drainEvents(t testing.TB, app *fwApp) []outboxEvent {
	t.Helper()
	var out []outboxEvent
	for {
		msgs, err := app.App.Outbox.Claim(t.Context(), ports.OutboxEvents, time.Now(), time.Minute, 100)
		if err != nil {
			t.Fatalf("claim events: %v", err)
		}
		for _, m := range msgs {
			var keys map[string]json.RawMessage
			mustUnmarshal(t, m.Payload, &keys)
			want := []string{"data", "timestamp", "type"}
			if _, ok := keys["actor"]; ok {
				want = []string{"actor", "data", "timestamp", "type"}
			}
			if got := slices.Sorted(maps.Keys(keys)); !slices.Equal(got, want) {
				t.Fatalf("payload %s has keys %v, want data, timestamp, type (and actor, for an impersonation)", m.Payload, got)
			}
			e := outboxEvent{ID: m.ID}
			mustUnmarshal(t, m.Payload, &e)
			if e.Type != m.Type || !strings.HasPrefix(m.ID, "msg_") {
				t.Fatalf("message %s of type %s carries %s", m.ID, m.Type, m.Payload)
			}
			if _, err := time.Parse(time.RFC3339, e.Timestamp); err != nil {
				t.Fatalf("timestamp %q is not RFC 3339", e.Timestamp)
			}
			if err := app.App.Outbox.Done(t.Context(), m.ID); err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
		if len(msgs) < 100 {
			return out
		}
	}
}

// keySecretInText finds a service key's secret anywhere in a text.
var keySecretInText = regexp.MustCompile(`gh_sk_[A-Za-z0-9]{43}`)

// mustEvents drains app's outbox and fails unless it held exactly the
// events of types want (in any order), none carrying a password or a
// service key's secret; it returns them by type.
func mustEvents(t testing.TB, app *fwApp, want ...string) map[string][]outboxEvent {
	t.Helper()
	evs := drainEvents(t, app)
	for _, e := range evs {
		b, _ := json.Marshal(e.Data)
		if strings.Contains(string(b), userPassword) || strings.Contains(string(b), adminPassword) || keySecretInText.Match(b) {
			t.Fatalf("%s carries a secret: %s", e.Type, b)
		}
	}
	var got []string
	byType := map[string][]outboxEvent{}
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
func mustData(t testing.TB, e outboxEvent, keys []string, fields ...any) {
	t.Helper()
	mustKeys(t, e.Data, keys...)
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
	fwForStores(t, storesThatMatter, adminEnv, func(t *testing.T, app *fwApp) {
		admin, adminID := mustAdmin(t, app)
		drainEvents(t, app)

		// Sign-up signs in (fwQuick): the user and their first session; the
		// commit signals this process's event relay.
		appended := app.App.Outbox.Appended(ports.OutboxEvents)
		select {
		case <-appended:
		default:
		}
		c := app.client(t)
		up := mustSignUp(t, c, "Ada", "ada@example.com", userPassword)
		select {
		case <-appended:
		default:
			t.Fatal("the events' commit did not signal the relay")
		}
		userID := mustID(t, up["user"])
		evs := mustEvents(t, app, "user.created", "session.created")
		mustData(t, evs["user.created"][0], backendUserFields, "id", userID, "email", "ada@example.com", "passkeys", 0.0)
		mustData(t, evs["session.created"][0], sessionEventFields, "userId", userID, "impersonatedBy", nil)
		firstSession := evs["session.created"][0].Data["id"]

		// Sign-out revokes that session; sign-in starts another.
		mustOK(t, c.post("/api/auth/sign-out", "{}"))
		mustData(t, mustEvents(t, app, "session.revoked")["session.revoked"][0], sessionEventFields, "id", firstSession, "userId", userID)
		mustSignIn(t, c, "ada@example.com", userPassword)
		mustData(t, mustEvents(t, app, "session.created")["session.created"][0], sessionEventFields, "userId", userID)

		// Service keys: created and revoked, never with their secret.
		key := mustCreateKey(t, admin, map[string]any{"name": "events", "scopes": []string{"organizations:write", "domains:write"}})
		keyID := mustID(t, key)
		created := mustEvents(t, app, "service_key.created")["service_key.created"][0]
		mustData(t, created, keyEventFields, "id", keyID, "revokedAt", nil)
		spare := mustID(t, mustCreateKey(t, admin, map[string]any{"name": "spare", "scopes": []string{"users:read"}}))
		mustEvents(t, app, "service_key.created")
		mustStatus(t, admin.do(http.MethodDelete, serviceKeysPath+"/"+spare, "", "Origin", app.Cfg.HTTP.BaseURL), http.StatusNoContent)
		revoked := mustEvents(t, app, "service_key.revoked")["service_key.revoked"][0]
		mustData(t, revoked, keyEventFields, "id", spare)
		if revoked.Data["revokedAt"] == nil {
			t.Fatalf("service_key.revoked data %v has no revokedAt", revoked.Data)
		}

		// An organization, a member added, an invitation.
		k := keyClient{t: t, c: app.client(t), headers: []string{"Authorization", "Bearer " + key["secret"].(string)}}
		org := mustCreateTrustedOrg(t, k, "Acme", "acme", userID)
		orgID := mustID(t, org)
		evs = mustEvents(t, app, "organization.created", "member.added")
		mustData(t, evs["organization.created"][0], orgEventFields, "id", orgID, "memberCount", 1.0)
		mustData(t, evs["member.added"][0], memberEventFields, "organizationId", orgID, "userId", userID, "role", "owner")
		mustStatus(t, k.do(http.MethodPost, orgsPath+"/"+orgID+"/members", map[string]any{"userId": adminID, "role": "member"}), http.StatusCreated)
		mustData(t, mustEvents(t, app, "member.added")["member.added"][0], memberEventFields, "userId", adminID, "role", "member")
		r := k.do(http.MethodPost, orgsPath+"/"+orgID+"/invitations", map[string]any{"email": "bob@example.com", "role": "member"})
		mustStatus(t, r, http.StatusCreated)
		mustData(t, mustEvents(t, app, "invitation.created")["invitation.created"][0], inviteEventFields,
			"id", mustID(t, r.JSON(t)), "email", "bob@example.com", "status", "pending")

		// A domain.
		r = k.do(http.MethodPost, domainsPath, map[string]any{"hostname": "shop.example.com", "organizationId": orgID})
		mustStatus(t, r, http.StatusCreated)
		mustData(t, mustEvents(t, app, "domain.created")["domain.created"][0], domainEventFields,
			"id", mustID(t, r.JSON(t)), "hostname", "shop.example.com", "status", "pending", "organizationId", orgID)

		// Two-factor: sign-up, then the first code turns it on and rotates
		// the session.
		tf := mustTwoFactorUser(t, app, "tess@example.com")
		evs = mustEvents(t, app, "user.created", "session.created", "factor.enabled", "session.created", "session.revoked")
		tessID := evs["user.created"][0].Data["id"]
		mustData(t, evs["factor.enabled"][0], factorEventFields, "userId", tessID, "factor", "totp", "passkeyId", nil)

		// Turning it off again.
		mustOK(t, tf.c.post("/api/auth/two-factor/disable", mustJSON(t, map[string]any{"password": tfPassword})))
		mustData(t, mustEvents(t, app, "factor.disabled")["factor.disabled"][0], factorEventFields, "userId", tessID, "factor", "totp")
	})
}

// Ensure a first sign-in at an upstream provider writes the new user and
// their linked account, and unlinking writes account.unlinked.
func TestEvents_first_federated_sign_in_links_an_account(t *testing.T) {
	for _, s := range storesThatMatter {
		t.Run("store="+string(s), func(t *testing.T) {
			t.Parallel()
			w := mustFedWorld(t, s, nil)
			mustVerifiedUser(t, w.b, "Uma Upstream", "uma@upstream.example", fedPassword)
			drainEvents(t, w.a)

			br := newStrictBrowser(t, w.a)
			w.signInThroughB(t, br, "uma@upstream.example", map[string]any{"callbackURL": "/account"})
			evs := mustEvents(t, w.a, "user.created", "account.linked", "session.created")
			u := evs["user.created"][0]
			mustData(t, u, backendUserFields, "email", "uma@upstream.example", "emailVerified", true)
			linked, _ := u.Data["linkedAccounts"].([]any)
			if len(linked) != 1 {
				t.Fatalf("user.created linkedAccounts = %v, want the new account", u.Data["linkedAccounts"])
			}
			acct := evs["account.linked"][0]
			mustData(t, acct, linkedEventFields, "userId", u.Data["id"], "providerId", w.provider, "id", mustObject(t, linked[0])["id"])

			// An operator gives the user a password (which ends their
			// sessions), then unlinks the account.
			key := mustCreateKey(t, w.adminA, map[string]any{"name": "users", "scopes": []string{"users:write"}})
			k := keyClient{t: t, c: w.a.client(t), headers: []string{"Authorization", "Bearer " + key["secret"].(string)}}
			mustEvents(t, w.a, "service_key.created")
			mustStatus(t, k.do(http.MethodPut, usersPath+"/"+u.Data["id"].(string)+"/password", map[string]any{"password": "a new long passphrase 42"}), http.StatusNoContent)
			mustEvents(t, w.a, "session.revoked")
			mustStatus(t, k.do(http.MethodDelete, usersPath+"/"+u.Data["id"].(string)+"/linked-accounts/"+acct.Data["id"].(string), nil), http.StatusNoContent)
			mustData(t, mustEvents(t, w.a, "account.unlinked")["account.unlinked"][0], linkedEventFields, "id", acct.Data["id"], "userId", u.Data["id"])
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
func mustStartFaulty(t *testing.T, s store, what string) (*fwApp, atomicityFault) {
	t.Helper()
	if s == storeMemory {
		armed := &atomic.Bool{}
		faults := bootstrap.Faults{}
		if what == "event" {
			faults.Outbox = func(o ports.Outbox) ports.Outbox { return failingOutbox{Outbox: o, armed: armed} }
		} else {
			faults.AuditLog = func(l ports.AuditLog) ports.AuditLog { return failingAuditLog{AuditLog: l, armed: armed} }
		}
		app := mustStartFrameworkWith(t, s, adminEnv, func(cfg bootstrap.Config, logger *slog.Logger) (*bootstrap.App, func(), error) {
			return bootstrap.InitializeMemoryWithFaults(cfg, logger, faults)
		})
		return app, atomicityFault{arm: func() { armed.Store(true) }, disarm: func() { armed.Store(false) }}
	}
	app := mustStartFramework(t, s, adminEnv)
	db := mustDB(t, app)
	exec := func(sql string) {
		t.Helper()
		if err := db.Exec(sql).Error; err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	create := sqliteFault[what]
	if s == storePostgres {
		exec(`CREATE FUNCTION atomicity_fault() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN RAISE EXCEPTION 'injected: % refuses the row', TG_TABLE_NAME; END $$`)
		create = postgresFault[what]
	}
	drop := "DROP TRIGGER atomicity_fault"
	if s == storePostgres {
		drop += " ON " + faultTables[what]
	}
	return app, atomicityFault{arm: func() { exec(create) }, disarm: func() { exec(drop) }}
}

// mustInternalProblem fails unless r is a 500 problem that names nothing
// of the store.
func mustInternalProblem(t testing.TB, r *response) {
	t.Helper()
	mustStatus(t, r, http.StatusInternalServerError)
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
	for _, s := range storesThatMatter {
		for _, what := range []string{"event", "audit"} {
			t.Run("store="+string(s)+"/fault="+what, func(t *testing.T) {
				t.Parallel()
				app, fault := mustStartFaulty(t, s, what)
				admin, _ := mustAdmin(t, app)
				key := mustCreateKey(t, admin, map[string]any{"name": "atomicity",
					"scopes": []string{"users:read", "users:write", "organizations:read", "organizations:write"}})
				keyID := mustID(t, key)
				k := keyClient{t: t, c: app.client(t), headers: []string{"Authorization", "Bearer " + key["secret"].(string)}}
				owner := mustCreateBackendUser(t, k, map[string]any{"email": "owner@example.com", "name": "Owner"})
				orgID := mustID(t, mustCreateTrustedOrg(t, k, "Acme", "acme", mustID(t, owner)))
				drainEvents(t, app)

				fault.arm()
				mustInternalProblem(t, k.do(http.MethodPost, usersPath, map[string]any{"email": "new@example.com", "name": "New"}))
				mustInternalProblem(t, k.do(http.MethodPatch, orgsPath+"/"+orgID, map[string]any{"name": "Renamed"}))
				mustInternalProblem(t, k.do(http.MethodPost, usersPath+"/"+mustID(t, owner)+"/ban", map[string]any{"reason": "spam"}))
				fault.disarm()

				if users, _ := mustUserPage(t, k, url.Values{"email": {"new@example.com"}}); len(users) != 0 {
					t.Fatalf("the user was created without its %s: %v", what, users)
				}
				mustTrustedOrg(t, k.do(http.MethodGet, orgsPath+"/"+orgID, nil), http.StatusOK, "Acme")
				if got := mustBackendUserByID(t, k, mustID(t, owner)); got["banned"] != false {
					t.Fatalf("the ban was kept without its %s: %v", what, got)
				}
				mustEvents(t, app)
				mustServiceKeyAudit(t, admin, keyID, orgID, "organizations.create")

				mustCreateBackendUser(t, k, map[string]any{"email": "new@example.com", "name": "New"})
				mustData(t, mustEvents(t, app, "user.created")["user.created"][0], backendUserFields, "email", "new@example.com")
			})
		}
	}
}

// mustBackendUserByID reads a user through the trusted API.
func mustBackendUserByID(t testing.TB, k keyClient, id string) map[string]any {
	t.Helper()
	r := k.do(http.MethodGet, usersPath+"/"+id, nil)
	mustStatus(t, r, http.StatusOK)
	return r.JSON(t)
}
