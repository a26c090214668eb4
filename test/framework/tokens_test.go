package framework

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/gormstore/gormtest"
	"github.com/gatehouse/gatehouse/adapters/signingkeys"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/test/harness"
)

// mustJWKS fetches the key set and checks its shape: every key public only,
// with a unique kid, alg and use "sig"; OKP keys Ed25519 for EdDSA, RSA keys
// of 2048 bits for RS256. It returns the keys by kid.
func mustJWKS(t testing.TB, c *harness.Client) map[string]map[string]any {
	t.Helper()
	r := c.Get(harness.JWKSPath)
	harness.MustStatus(t, r, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type = %q", ct)
	}
	if cc := r.Header.Get("Cache-Control"); cc != "public, max-age=300" {
		t.Fatalf("Cache-Control = %q", cc)
	}
	if o := r.Header.Get("Access-Control-Allow-Origin"); o != "*" {
		t.Fatalf("Access-Control-Allow-Origin = %q", o)
	}
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	harness.MustUnmarshal(t, r.Body, &set)
	out := map[string]map[string]any{}
	for _, k := range set.Keys {
		kid, _ := k["kid"].(string)
		if kid == "" || out[kid] != nil {
			t.Fatalf("missing or repeated kid in %s", r.Body)
		}
		out[kid] = k
		for _, private := range []string{"d", "p", "q", "dp", "dq", "qi", "k", "oth"} {
			if _, ok := k[private]; ok {
				t.Fatalf("key %s publishes the private member %q", kid, private)
			}
		}
		if k["use"] != "sig" {
			t.Fatalf("key %s: use = %v", kid, k["use"])
		}
		switch k["alg"] {
		case "EdDSA":
			x, _ := base64.RawURLEncoding.DecodeString(k["x"].(string))
			if k["kty"] != "OKP" || k["crv"] != "Ed25519" || len(x) != ed25519.PublicKeySize || len(k) != 6 {
				t.Fatalf("EdDSA key = %v", k)
			}
		case "RS256":
			n, _ := base64.RawURLEncoding.DecodeString(k["n"].(string))
			if k["kty"] != "RSA" || k["e"] != "AQAB" || len(n) < 256 || len(k) != 6 {
				t.Fatalf("RS256 key = %v", k)
			}
		default:
			t.Fatalf("key %s: alg = %v", kid, k["alg"])
		}
	}
	return out
}

// kidsOf returns the kids of the keys of alg, sorted.
func kidsOf(keys map[string]map[string]any, alg string) []string {
	var out []string
	for kid, k := range keys {
		if k["alg"] == alg {
			out = append(out, kid)
		}
	}
	slices.Sort(out)
	return out
}

// Ensure the key set has one EdDSA and one RS256 key with public members
// only, cacheable and readable from any origin.
// It keeps a fresh application: it counts every key in the key set.
func TestTokens_jwks(t *testing.T) {
	t.Parallel()
	harness.ForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		c := app.NewClient(t)
		keys := mustJWKS(t, c)
		if len(kidsOf(keys, "EdDSA")) != 1 || len(kidsOf(keys, "RS256")) != 1 || len(keys) != 2 {
			t.Fatalf("key set = %v", keys)
		}
		r := c.Get(harness.JWKSPath, "Origin", "https://elsewhere.example.com")
		if r.Status != http.StatusOK || r.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("from another origin: %d %q", r.Status, r.Header.Get("Access-Control-Allow-Origin"))
		}
	})
}

// Ensure /api/auth/token needs a session (401 UNAUTHORIZED) and signs the
// user object with iat, sub, exp, iss and aud, verifiable with the key set;
// get-session sends the same token in set-auth-jwt when signed in, exposed
// to browser code, and not when signed out.
func TestTokens_framework_token(t *testing.T) {
	t.Parallel()
	harness.SharedForStores(t, harness.StoresOnce, harness.FwQuick, func(t *testing.T, app *harness.App) {
		anon := app.NewClient(t)
		harness.MustCode(t, anon.Get("/api/auth/token"), http.StatusUnauthorized, "UNAUTHORIZED")
		r := anon.Get("/api/auth/get-session")
		harness.MustNull(t, r)
		if r.Header.Get("set-auth-jwt") != "" {
			t.Fatal("set-auth-jwt without a session")
		}

		c := app.NewClient(t)
		harness.MustSignUp(t, c, "Ada", harness.Email(t, "ada@example.com"), "correct horse battery staple")
		r = c.Get("/api/auth/token")
		body := harness.MustOK(t, r)
		if r.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("Cache-Control = %q", r.Header.Get("Cache-Control"))
		}
		token, _ := body["token"].(string)
		h, claims := harness.MustVerifyJWT(t, c, token)
		if h.Algorithm != "EdDSA" || h.ExtraHeaders["typ"] != "JWT" || !slices.Contains(kidsOf(mustJWKS(t, c), "EdDSA"), h.KeyID) {
			t.Fatalf("header = %+v", h)
		}
		user := harness.MustUser(t, harness.MustSession(t, c))
		for name, want := range user {
			if got := claims[name]; harness.MustJSON(t, got) != harness.MustJSON(t, want) {
				t.Errorf("claim %s = %v, want the user object's %v", name, got, want)
			}
		}
		iat, exp := claims["iat"].(float64), claims["exp"].(float64)
		if claims["sub"] != user["id"] || claims["iss"] != app.Cfg.HTTP.BaseURL+"/api/auth" || claims["aud"] != app.Cfg.HTTP.BaseURL || exp-iat != 15*60 {
			t.Fatalf("claims = %v", claims)
		}

		r = c.Get("/api/auth/get-session", "Origin", app.Cfg.HTTP.BaseURL)
		harness.MustOK(t, r)
		jwtHeader := r.Header.Get("set-auth-jwt")
		if _, again := harness.MustVerifyJWT(t, c, jwtHeader); again["sub"] != user["id"] {
			t.Fatalf("set-auth-jwt claims = %v", again)
		}
		exposed := strings.Join(r.Header.Values("Access-Control-Expose-Headers"), ",")
		if !strings.Contains(exposed, "set-auth-jwt") || !strings.Contains(exposed, "set-auth-token") {
			t.Fatalf("Access-Control-Expose-Headers = %q", exposed)
		}
		harness.MustOK(t, c.Post("/api/auth/sign-out", ""))
		if r := c.Get("/api/auth/get-session"); r.Header.Get("set-auth-jwt") != "" {
			t.Fatal("set-auth-jwt after sign-out")
		}
		harness.MustCode(t, c.Get("/api/auth/token"), http.StatusUnauthorized, "UNAUTHORIZED")
	})
}

// Ensure the issuer and audiences of framework tokens are configurable; two
// audiences make aud an array.
// It keeps a fresh application: it has an issuer and audiences of its own.
func TestTokens_framework_token_issuer_and_audience(t *testing.T) {
	t.Parallel()
	env := harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_JWT_ISSUER": "https://issuer.example.com",
		"GATEHOUSE_JWT_AUDIENCE": "https://api.example.com,https://other.example.com", "GATEHOUSE_JWT_LIFETIME": "5m"})
	harness.ForStores(t, []harness.Store{harness.StoreMemory}, env, func(t *testing.T, app *harness.App) {
		c := app.NewClient(t)
		harness.MustSignUp(t, c, "Ada", "ada@example.com", "correct horse battery staple")
		_, claims := harness.MustVerifyJWT(t, c, harness.MustOK(t, c.Get("/api/auth/token"))["token"].(string))
		if claims["iss"] != "https://issuer.example.com" || harness.MustJSON(t, claims["aud"]) != `["https://api.example.com","https://other.example.com"]` ||
			claims["exp"].(float64)-claims["iat"].(float64) != 300 {
			t.Fatalf("claims = %v", claims)
		}
	})
}

// Ensure signing keys rotate from the admin route: 401 without a session,
// 403 for others, and for the administrator, asking for an immediate
// rotation, a new key that signs at once while the old one stays in the key
// set (its tokens still verify). The rotation is audited; a bad algorithm
// is a 400 naming body.alg.
// It keeps a fresh application: it rotates the signing keys.
func TestTokens_rotate_signing_keys(t *testing.T) {
	t.Parallel()
	harness.ForStores(t, harness.StoresOnce, harness.AdminEnv, func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		plain, _ := harness.MustPlainUser(t, app, "Eve", "eve@example.com", harness.UserPassword)
		origin := []string{"Origin", app.Cfg.HTTP.BaseURL}
		for _, rt := range []struct{ method, path, body string }{
			{http.MethodGet, harness.SigningKeysPath, ""},
			{http.MethodPost, harness.SigningKeysPath + "/rotate", `{"alg":"EdDSA"}`},
		} {
			harness.MustProblem(t, app.NewClient(t).Do(rt.method, rt.path, rt.body, origin...), http.StatusUnauthorized, "auth.unauthenticated")
			harness.MustProblem(t, plain.Do(rt.method, rt.path, rt.body, origin...), http.StatusForbidden, "auth.not_platform_admin")
		}
		before := mustJWKS(t, admin)
		oldEd, oldRSA := kidsOf(before, "EdDSA")[0], kidsOf(before, "RS256")[0]
		oldToken := harness.MustOK(t, admin.Get("/api/auth/token"))["token"].(string)

		harness.MustFieldProblem(t, admin.Post(harness.SigningKeysPath+"/rotate", `{"alg":"HS256"}`), "body.alg")
		rotated := harness.MustOK(t, admin.Post(harness.SigningKeysPath+"/rotate", `{"alg":"EdDSA","immediate":true}`))["data"].([]any)
		newKey := harness.MustObject(t, rotated[0])
		if len(rotated) != 1 || newKey["alg"] != "EdDSA" || newKey["status"] != "active" || newKey["id"] == oldEd {
			t.Fatalf("rotate answered %v", rotated)
		}
		after := mustJWKS(t, admin)
		if eds := kidsOf(after, "EdDSA"); len(eds) != 2 || !slices.Contains(eds, oldEd) || !slices.Contains(eds, newKey["id"].(string)) ||
			!slices.Equal(kidsOf(after, "RS256"), []string{oldRSA}) {
			t.Fatalf("key set after rotation = %v", after)
		}
		if h, _ := harness.MustVerifyJWT(t, admin, harness.MustOK(t, admin.Get("/api/auth/token"))["token"].(string)); h.KeyID != newKey["id"] {
			t.Fatalf("a token after rotation names %s, want %s", h.KeyID, newKey["id"])
		}
		harness.MustVerifyJWT(t, admin, oldToken) // signed by the retired key, still published

		list := harness.MustOK(t, admin.Get(harness.SigningKeysPath))["data"].([]any)
		if len(list) != 3 || harness.MustObject(t, list[0])["id"] != newKey["id"] {
			t.Fatalf("list = %v", list)
		}
		for _, v := range list {
			k := harness.MustObject(t, v)
			if retired := k["id"] == oldEd; retired != (k["status"] == "retired") || retired != (k["publishedUntil"] != nil) {
				t.Fatalf("listed key %v", k)
			}
		}
		// No body rotates both algorithms.
		if both := harness.MustOK(t, admin.Post(harness.SigningKeysPath+"/rotate", ""))["data"].([]any); len(both) != 2 {
			t.Fatalf("rotate without a body = %v", both)
		}
		entries := harness.MustOK(t, admin.Get("/api/admin/audit-log?action=admin.rotate-signing-key"))["data"].([]any)
		var outcomes []string
		for _, e := range entries {
			outcomes = append(outcomes, harness.MustObject(t, e)["outcome"].(string))
		}
		slices.Sort(outcomes)
		// The plain user's denial and three keys made (HS256 was refused at
		// the edge, before the use case).
		if strings.Join(outcomes, ",") != "denied,success,success,success" {
			t.Fatalf("audit outcomes = %v", outcomes)
		}
	})
}

// Ensure keys survive a restart on the same database (same kids, and under
// a rotated GATEHOUSE_SECRETS list that keeps the old secret), that the
// stored private key is sealed (no private material in the row, and only
// the service secret opens it), and that a secret no longer configured
// gets new keys while the old ones stay published.
// It keeps a fresh application: it restarts the application on its database.
func TestTokens_keys_survive_restart_sealed(t *testing.T) {
	t.Parallel()
	harness.ForStores(t, harness.SQLOnly(harness.StoresThatMatter), harness.FwQuick, func(t *testing.T, app *harness.App) {
		kids := mustJWKS(t, app.NewClient(t))
		same := harness.MustStart(t, app.Store, harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_DATABASE_URL": app.DatabaseURL}))
		rotatedSecrets := harness.MustStart(t, app.Store, harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_DATABASE_URL": app.DatabaseURL,
			"GATEHOUSE_SECRET": "", "GATEHOUSE_SECRETS": "a-new-secret-0123456789-abcdefghijklmnopqrstuv," + harness.TestSecret}))
		for _, other := range []*harness.App{same, rotatedSecrets} {
			if got := mustJWKS(t, other.NewClient(t)); harness.MustJSON(t, got) != harness.MustJSON(t, kids) {
				t.Fatalf("after a restart the key set is %v, want %v", got, kids)
			}
		}

		rows := mustStoredSigningKeys(t, app)
		if len(rows) != 2 {
			t.Fatalf("rows = %d, want 2", len(rows))
		}
		for _, k := range rows {
			if strings.Contains(string(k.PublicJWK), `"d"`) {
				t.Fatalf("public_jwk holds a private member: %s", k.PublicJWK)
			}
			priv, err := signingkeys.PrivateKey(signingkeys.Secrets{harness.TestSecret}, k)
			if err != nil {
				t.Fatalf("the service secret does not open %s: %v", k.ID, err)
			}
			var material [][]byte
			switch p := priv.(type) {
			case ed25519.PrivateKey:
				material = [][]byte{p.Seed()}
			case *rsa.PrivateKey:
				material = [][]byte{p.D.Bytes(), p.Primes[0].Bytes(), p.Primes[1].Bytes()}
			}
			for _, m := range material {
				if bytes.Contains(k.SealedPrivate, m[:16]) || strings.Contains(string(k.SealedPrivate), base64.RawURLEncoding.EncodeToString(m[:12])) {
					t.Fatalf("sealed_private of %s holds private key material", k.ID)
				}
			}
			if _, err := signingkeys.PrivateKey(signingkeys.Secrets{"not-the-secret-0123456789-abcdefghijklmnopq"}, k); err == nil {
				t.Fatalf("another secret opened %s", k.ID)
			}
		}

		replaced := harness.MustStart(t, app.Store, harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_DATABASE_URL": app.DatabaseURL,
			"GATEHOUSE_SECRET": "a-new-secret-0123456789-abcdefghijklmnopqrstuv"}))
		now := mustJWKS(t, replaced.NewClient(t))
		for _, alg := range []string{"EdDSA", "RS256"} {
			if got := kidsOf(now, alg); len(got) != 2 || !slices.Contains(got, kidsOf(kids, alg)[0]) {
				t.Fatalf("%s keys after the secret changed = %v", alg, got)
			}
		}
	})
}

// mustStoredSigningKeys reads the signing keys as stored in app's database
// (SQLite or PostgreSQL), oldest first. With signingkeys.PrivateKey or
// signingkeys.SignClaims and the service secret (TestSecret), a test can
// sign what it likes with them, as an operator holding both could.
func mustStoredSigningKeys(t testing.TB, app *harness.App) []domain.SigningKey {
	t.Helper()
	var rows []struct {
		ID            string
		Alg           string
		PublicJWK     string `gorm:"column:public_jwk"`
		SealedPrivate []byte
	}
	if err := harness.MustDB(t, app).Raw("SELECT id, alg, public_jwk, sealed_private FROM signing_keys ORDER BY created_at, id").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	out := make([]domain.SigningKey, len(rows))
	for i, r := range rows {
		out[i] = domain.SigningKey{ID: domain.SigningKeyID(r.ID), Alg: domain.SigningAlgorithm(r.Alg), PublicJWK: []byte(r.PublicJWK), SealedPrivate: r.SealedPrivate}
	}
	return out
}

var cliNewKeyRE = regexp.MustCompile(`(?m)^new (EdDSA|RS256) signing key (\S+), signing from \S+$`)

// Ensure "gatehouse signing-keys" lists the keys and rotates them on the
// database (audited as the command line): with --now the new key signs at
// once, without it the new key is pending; an unknown algorithm is refused.
// It keeps a fresh application: it has a database of its own, shared with the CLI.
func TestCLI_signing_keys(t *testing.T) {
	t.Parallel()
	dbURL := string(gormtest.SQLiteURL(t))
	env := []string{"GATEHOUSE_SECRET=" + harness.TestSecret, "GATEHOUSE_BASE_URL=" + harness.CLIBaseURL, "GATEHOUSE_DATA_DIR=" + t.TempDir(), "GATEHOUSE_DATABASE_URL=" + dbURL}
	listed := harness.MustRunCLI(t, env, "", "signing-keys", "list")
	if lines := strings.Split(strings.TrimSpace(listed), "\n"); len(lines) != 2 || !strings.Contains(listed, "\tEdDSA\t") || !strings.Contains(listed, "\tRS256\t") {
		t.Fatalf("list printed %q", listed)
	}
	out := harness.MustRunCLI(t, env, "", "signing-keys", "rotate", "--alg", "RS256", "--now")
	m := cliNewKeyRE.FindStringSubmatch(out)
	if m == nil || m[1] != "RS256" {
		t.Fatalf("rotate printed %q", out)
	}
	listed = harness.MustRunCLI(t, env, "", "signing-keys", "list")
	if lines := strings.Split(strings.TrimSpace(listed), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], m[2]+"\tRS256\t") || strings.Count(listed, "retired") != 1 {
		t.Fatalf("list after rotation printed %q", listed)
	}
	if _, _, err := harness.RunCLI(t, env, "", "signing-keys", "rotate", "--alg", "HS256"); err == nil {
		t.Fatal("rotate --alg HS256 succeeded")
	}
	calm := cliNewKeyRE.FindStringSubmatch(harness.MustRunCLI(t, env, "", "signing-keys", "rotate", "--alg", "EdDSA"))
	listed = harness.MustRunCLI(t, env, "", "signing-keys", "list")
	if calm == nil || !strings.Contains(listed, calm[2]+"\tEdDSA\t") || strings.Count(listed, "\tpending, signs from ") != 1 || strings.Count(listed, ", retires ") != 1 {
		t.Fatalf("list after a rotation without --now printed %q", listed)
	}

	app := harness.MustStart(t, harness.StoreSQLite, harness.Env(harness.FwQuick, map[string]string{"GATEHOUSE_DATABASE_URL": dbURL}))
	keys := mustJWKS(t, app.NewClient(t))
	if rsaKids := kidsOf(keys, "RS256"); len(rsaKids) != 2 || !slices.Contains(rsaKids, m[2]) {
		t.Fatalf("the service publishes %v", keys)
	}
	var actors []string
	if err := harness.MustDB(t, app).Raw("SELECT actor_type FROM audit_log WHERE action = 'admin.rotate-signing-key'").Scan(&actors).Error; err != nil {
		t.Fatal(err)
	}
	if strings.Join(actors, ",") != "cli,cli" {
		t.Fatalf("audit actors = %v", actors)
	}
}

// reloadEnv makes instances reload their signing keys every second, so a
// rotated key signs two seconds after the rotation.
var reloadEnv = map[string]string{"GATEHOUSE_SIGNING_KEY_RELOAD_INTERVAL": "1s"}

// startKeyRefresher reloads app's signing keys at its configured interval
// until the test ends, as "gatehouse serve" does.
func startKeyRefresher(t testing.TB, app *harness.App) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		app.App.RefreshSigningKeysEvery(ctx, app.Cfg.Tokens.SigningKeyReloadInterval, slog.New(slog.NewTextHandler(io.Discard, nil)))
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done }) // before the app's database closes
}

// mustTokenSignedBy asks c for framework tokens until one names kid, and
// returns it. It gives up after 30 s, far beyond any activation delay here.
func mustTokenSignedBy(t testing.TB, c *harness.Client, kid string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		token := harness.MustOK(t, c.Get("/api/auth/token"))["token"].(string)
		h, _ := harness.MustVerifyJWT(t, c, token)
		if h.KeyID == kid {
			return token
		}
		if time.Now().After(deadline) {
			t.Fatalf("tokens still name %s, want %s", h.KeyID, kid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Ensure a rotation publishes the new key before signing with it: right
// after it the key set lists both keys, the new one pending, and tokens are
// still signed by the old key, until just before the activation delay (two
// reload intervals) ends on the app's clock; from then on they are signed
// by the new one, which the key set verifies. An immediate rotation signs
// with its key at once.
// It keeps a fresh application: it rotates the signing keys, with a reload interval of its own.
func TestTokens_rotation_publishes_before_signing(t *testing.T) {
	t.Parallel()
	harness.ForStores(t, harness.StoresOnce, harness.Env(harness.AdminEnv, reloadEnv), func(t *testing.T, app *harness.App) {
		admin, _ := harness.MustAdmin(t, app)
		oldKid := kidsOf(mustJWKS(t, admin), "EdDSA")[0]
		newKey := harness.MustObject(t, harness.MustOK(t, admin.Post(harness.SigningKeysPath+"/rotate", `{"alg":"EdDSA"}`))["data"].([]any)[0])
		newKid, _ := newKey["id"].(string)
		activates, err := time.Parse(time.RFC3339Nano, newKey["activatesAt"].(string))
		if err != nil || newKey["status"] != "pending" || newKey["retiredAt"] != nil || !activates.After(time.Now()) {
			t.Fatalf("rotate answered %v", newKey)
		}
		if eds := kidsOf(mustJWKS(t, admin), "EdDSA"); len(eds) != 2 || !slices.Contains(eds, oldKid) || !slices.Contains(eds, newKid) {
			t.Fatalf("key set after rotation = %v, want both keys", eds)
		}
		if h, _ := harness.MustVerifyJWT(t, admin, harness.MustOK(t, admin.Get("/api/auth/token"))["token"].(string)); h.KeyID != oldKid {
			t.Fatalf("a token right after the rotation names %s, want the old key %s", h.KeyID, oldKid)
		}
		for _, v := range harness.MustOK(t, admin.Get(harness.SigningKeysPath))["data"].([]any) {
			if k := harness.MustObject(t, v); k["id"] == oldKid && (k["status"] != "active" || k["retiredAt"] != newKey["activatesAt"]) {
				t.Fatalf("old key listed as %v, want active until the new key's activation", k)
			}
		}
		app.Clock.AdvancePast(activates.Add(-time.Second))
		if h, _ := harness.MustVerifyJWT(t, admin, harness.MustOK(t, admin.Get("/api/auth/token"))["token"].(string)); h.KeyID != oldKid {
			t.Fatalf("a token just before the activation names %s, want the old key %s", h.KeyID, oldKid)
		}
		app.Clock.AdvancePast(activates)
		if h, _ := harness.MustVerifyJWT(t, admin, harness.MustOK(t, admin.Get("/api/auth/token"))["token"].(string)); h.KeyID != newKid {
			t.Fatalf("a token after the activation names %s, want the new key %s", h.KeyID, newKid)
		}

		urgent := harness.MustObject(t, harness.MustOK(t, admin.Post(harness.SigningKeysPath+"/rotate", `{"alg":"EdDSA","immediate":true}`))["data"].([]any)[0])
		if urgent["status"] != "active" {
			t.Fatalf("immediate rotation answered %v", urgent)
		}
		if h, _ := harness.MustVerifyJWT(t, admin, harness.MustOK(t, admin.Get("/api/auth/token"))["token"].(string)); h.KeyID != urgent["id"] {
			t.Fatalf("a token after an immediate rotation names %s, want %s", h.KeyID, urgent["id"])
		}
	})
}

// Ensure the scenario of a load balancer over two instances on one
// database: a key rotated on instance A signs there only once instance B
// publishes it too, so the first token A signs with it verifies against
// B's key set. The wait for the activation (four seconds) is real: B
// publishes the key when its reload job ticks, and the jobs tick on the
// wall clock; advancing the clock would let A sign before B could.
// It keeps a fresh application: it rotates the signing keys across two instances.
func TestTokens_rotation_across_instances(t *testing.T) {
	t.Parallel()
	harness.ForStores(t, harness.SQLOnly(harness.StoresThatMatter), harness.Env(harness.AdminEnv, map[string]string{"GATEHOUSE_SIGNING_KEY_RELOAD_INTERVAL": "2s"}), func(t *testing.T, a *harness.App) {
		b := harness.MustStart(t, a.Store, harness.Env(harness.AdminEnv, map[string]string{"GATEHOUSE_SIGNING_KEY_RELOAD_INTERVAL": "2s", "GATEHOUSE_DATABASE_URL": a.DatabaseURL}))
		startKeyRefresher(t, a)
		startKeyRefresher(t, b)
		admin, _ := harness.MustAdmin(t, a)
		newKid := harness.MustObject(t, harness.MustOK(t, admin.Post(harness.SigningKeysPath+"/rotate", `{"alg":"EdDSA"}`))["data"].([]any)[0])["id"].(string)
		token := mustTokenSignedBy(t, admin, newKid)
		if h, _ := harness.MustVerifyJWT(t, b.NewClient(t), token); h.KeyID != newKid {
			t.Fatalf("B verified a token naming %s", h.KeyID)
		}
	})
}
