package shell

import (
	"context"
	"embed"
	"time"

	"github.com/gatehouse/gatehouse/adapters/httpapi/internal/edge"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
)

//go:embed templates/*.html assets/*
var files embed.FS

// The paths of the shell's stylesheet and scripts. The layout's sit under
// the console's path, where they have always been served from, for the
// account pages too; the passkey helpers, which the hosted sign-in page
// loads as well, sit beside the hosted pages' own assets.
const (
	StylesheetPath     = "/console/assets/console.css"
	ScriptPath         = "/console/assets/console.js"
	WebAuthnScriptPath = "/assets/webauthn.js"
)

// webAuthn is the helpers both passkey scripts share (assets/webauthn.js).
var webAuthn = NewAsset(files, "assets/webauthn.js", WebAuthnScriptPath, JavaScript)

// WebAuthnScript is the script of the helpers both passkey scripts share,
// the account security page's and the hosted sign-in page's (base64url and
// credential descriptors): a page loads it, deferred, before its own.
// AddAssetRoutes serves it.
func WebAuthnScript() *Asset { return webAuthn }

// ConsoleHome and AccountHome are the homes of the two areas the layout
// knows: its navigation and the refusal page link to both.
const (
	ConsoleHome = "/console"
	AccountHome = edge.AccountPath
)

// Forms spends the single-use form tokens (application/admin.ConsoleForms):
// the first post of a token spends it in the store, so a replay is refused
// on every replica.
type Forms interface {
	// Now is the time the tokens are minted and checked at.
	Now() time.Time
	// Spend records nonce as used until expiresAt, or fails if it was.
	Spend(ctx context.Context, nonce string, expiresAt time.Time) error
}

// Admins is what the console's gate asks about a signed-in user
// (application/admin.Administration).
type Admins interface {
	// IsAdmin reports whether u is a platform administrator.
	IsAdmin(u *domain.User) bool
	// RequireSecondFactor refuses an administrator the multi-factor rules
	// keep out (admin.ErrAdminMFARequired).
	RequireSecondFactor(ctx context.Context, p usecase.Principal) error
}

// Deps are what the shell uses.
type Deps struct {
	Forms Forms
	// Admins says who administers the platform: the console's gate
	// (Shell.Administrator), and the account pages' link to the console.
	Admins Admins
}

// Shell is the surfaces' shared pieces, on the edge's Kit.
type Shell struct {
	kit     *edge.Kit
	forms   Forms
	admins  Admins
	css, js *Asset
	refusal *Template[*refusalView] // the shell's own page
}

// New returns the shell on k.
func New(k *edge.Kit, d Deps) *Shell {
	if k == nil || d.Forms == nil || d.Admins == nil {
		panic("shell: nil dependency")
	}
	s := &Shell{kit: k, forms: d.Forms, admins: d.Admins,
		css: NewAsset(files, "assets/console.css", StylesheetPath, CSS),
		js:  NewAsset(files, "assets/console.js", ScriptPath, JavaScript)}
	views := s.NewViews(files, nil)
	s.refusal = NewTemplate[*refusalView](views, "refusal")
	views.MustBeTyped()
	return s
}

// Kit is the edge's Kit the shell registers routes on.
func (s *Shell) Kit() *edge.Kit { return s.kit }

// AddAssetRoutes registers the shell's stylesheet and scripts, once, for
// every surface that loads them (routes.go calls it).
func (s *Shell) AddAssetRoutes() {
	s.css.Route(s.kit)
	s.js.Route(s.kit)
	webAuthn.Route(s.kit)
}
