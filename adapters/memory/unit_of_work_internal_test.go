package memory

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/ports"
	"github.com/gatehouse/gatehouse/ports/conformance"
)

// Ensure every write the repositories make can be undone: each storage
// suite runs with the undo log recording (as inside a unit of work, though
// each call takes the lock itself), and replaying the log afterwards must
// leave every map empty. A write that bypasses set and unset survives the
// replay and fails the test.
func TestUnitOfWork_undo_log_reverts_every_suite(t *testing.T) {
	recording := func(t *testing.T) *DB {
		db := NewDB()
		db.unit = true
		t.Cleanup(func() {
			db.mu.Lock()
			defer db.mu.Unlock()
			n := len(db.undo)
			db.rollback(0)
			if left := nonEmptyMaps(db); len(left) > 0 {
				t.Errorf("after replaying %d undo entries these maps still hold rows: %s", n, strings.Join(left, ", "))
			}
		})
		return db
	}
	newStores := func(t *testing.T) conformance.Stores { return storesOf(recording(t)) }
	suites := map[string]func(*testing.T, func(*testing.T) conformance.Stores){
		"users": func(t *testing.T, _ func(*testing.T) conformance.Stores) {
			conformance.RunUserRepository(t, func(t *testing.T) ports.UserRepository { return NewUserRepository(recording(t)) })
		},
		"user_page":     conformance.RunUserPage,
		"sessions":      conformance.RunSessionRepository,
		"credentials":   conformance.RunCredentialRepository,
		"verifications": conformance.RunVerificationRepository,
		"service_keys":  conformance.RunServiceKeyRepository,
		"audit":         conformance.RunAuditLog,
		"organizations": conformance.RunOrganizationRepository,
		"domains":       conformance.RunDomainRepository,
		"oauth":         conformance.RunOAuthRepositories,
		"mfa":           conformance.RunMFARepositories,
		"passkeys":      conformance.RunPasskeyRepositories,
		"federation":    conformance.RunFederationRepositories,
		"outbox":        conformance.RunOutbox,
		"unit_of_work":  conformance.RunUnitOfWork,
		"webhooks": func(t *testing.T, _ func(*testing.T) conformance.Stores) {
			conformance.RunWebhookStores(t, func(t *testing.T) conformance.WebhookStores {
				db := recording(t)
				q := NewWebhookQueue(db)
				return conformance.WebhookStores{Endpoints: NewWebhookEndpointRepository(db), Queue: q, Log: q, UnitOfWork: NewUnitOfWork(db)}
			})
		},
		"signing_keys": func(t *testing.T, _ func(*testing.T) conformance.Stores) {
			conformance.RunSigningKeyRepository(t, func(t *testing.T) ports.SigningKeyRepository { return NewSigningKeyRepository(recording(t)) })
		},
	}
	for name, run := range suites {
		t.Run(name, func(t *testing.T) { run(t, newStores) })
	}
}

// nonEmptyMaps names the maps of db that hold anything, those of its
// struct fields (webhooks) included.
func nonEmptyMaps(db *DB) []string {
	var out []string
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		for i := range v.NumField() {
			switch f := v.Field(i); f.Kind() {
			case reflect.Map:
				if f.Len() > 0 {
					out = append(out, prefix+v.Type().Field(i).Name)
				}
			case reflect.Struct:
				walk(prefix+v.Type().Field(i).Name+".", f)
			}
		}
	}
	walk("", reflect.ValueOf(db).Elem())
	return out
}

// Ensure no repository writes a map of the store directly: every
// assignment to an indexed map and every delete in this package's sources
// goes through set and unset, which keep the undo log. Maps a function
// builds for itself before storing them (and the helpers themselves) are
// named in allowed.
func TestUnitOfWork_writes_go_through_the_undo_log(t *testing.T) {
	allowed := map[string]bool{
		"unit_of_work.go:set": true, "unit_of_work.go:unset": true, "unit_of_work.go:rollback": true,
		"mfa.go:ReplaceBackupCodes":     true, // fills codes, a new map, then sets it
		"users.go:Page":                 true, // an index and counts of its own
		"outbox.go:Stats":               true, // the answer's map
		"counts.go:CountByStatus":       true, // the answer's map
		"outbox.go:signal":              true, // the channels, not stored rows
		"leases.go:Acquire":             true, // Leases has its own map and lock, in no unit of work
		"leases.go:Release":             true,
		"signin_stats.go:Record":        true, // SignInStats has its own map and lock, in no unit of work
		"signin_stats.go:DeleteBefore":  true,
		"spent_tokens.go:Spend":         true, // SpentTokens too
		"spent_tokens.go:DeleteExpired": true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || allowed[name+":"+fn.Name.Name] {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.AssignStmt:
					for _, lhs := range n.Lhs {
						if _, ok := lhs.(*ast.IndexExpr); ok {
							t.Errorf("%s: %s writes a map directly; use set", fset.Position(n.Pos()), fn.Name.Name)
						}
					}
				case *ast.IncDecStmt:
					if _, ok := n.X.(*ast.IndexExpr); ok {
						t.Errorf("%s: %s writes a map directly; use set", fset.Position(n.Pos()), fn.Name.Name)
					}
				case *ast.CallExpr:
					if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "delete" {
						t.Errorf("%s: %s deletes from a map directly; use unset", fset.Position(n.Pos()), fn.Name.Name)
					}
				}
				return true
			})
		}
	}
}

// storesOf returns every repository on db.
func storesOf(db *DB) conformance.Stores {
	return conformance.Stores{
		Users:         NewUserRepository(db),
		Sessions:      NewSessionRepository(db),
		Credentials:   NewCredentialRepository(db),
		Verifications: NewVerificationRepository(db),
		Organizations: NewOrganizationRepository(db),
		ServiceKeys:   NewServiceKeyRepository(db),
		Audit:         NewAuditLog(db),
		Domains:       NewDomainRepository(db),
		OAuthClients:  NewOAuthClientRepository(db),
		OAuthGrants:   NewOAuthGrantRepository(db),

		TwoFactor:          NewTwoFactorRepository(db),
		MFAChallenges:      NewMFAChallengeRepository(db),
		Passkeys:           NewPasskeyRepository(db),
		WebAuthnChallenges: NewWebAuthnChallengeRepository(db),

		IdentityProviders: NewIdentityProviderRepository(db),
		LinkedAccounts:    NewLinkedAccountRepository(db),
		FederationStates:  NewFederationStateRepository(db),

		UnitOfWork: NewUnitOfWork(db),
		Outbox:     NewOutbox(db),
	}
}
