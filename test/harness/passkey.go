package harness

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/descope/virtualwebauthn"
	"github.com/gatehouse/gatehouse/test/webauthntest"
)

// The passkey plugin's routes (docs/multi-factor.md, Passkeys), from
// outside, with a software authenticator: registration, the list, rename,
// sign-in with a discoverable passkey, step-up, deletion, and what is
// refused: a counter that went backwards, a challenge used twice, another
// user's credential, a wrong origin, no user verification, hostile input.

const PkOrigin = "http://localhost:3000"

// PkEnv makes localhost the relying party (the test server listens on an
// address, which browsers refuse as an RP ID); the ceremonies' client data
// names PkOrigin.
var PkEnv = Env(FwQuick, map[string]string{
	"GATEHOUSE_PASSKEY_RP_ID":   "localhost",
	"GATEHOUSE_PASSKEY_ORIGINS": PkOrigin,
	"GATEHOUSE_STEP_UP_WINDOW":  "1m",
})

// PkDevice is an authenticator holding one passkey.
type PkDevice struct {
	Rp   virtualwebauthn.RelyingParty
	Auth virtualwebauthn.Authenticator
	Cred virtualwebauthn.Credential
}

func NewDevice() *PkDevice {
	return &PkDevice{
		Rp:   virtualwebauthn.RelyingParty{ID: "localhost", Name: "Gatehouse", Origin: PkOrigin},
		Auth: virtualwebauthn.NewAuthenticator(),
		Cred: webauthntest.NewEC2Credential(),
	}
}

// credentialID is the device's passkey id as the wire gives it.
func (d *PkDevice) CredentialID() string { return base64.RawURLEncoding.EncodeToString(d.Cred.ID) }

// attest answers the registration options of r.
func (d *PkDevice) Attest(t testing.TB, r *Response) string {
	t.Helper()
	MustStatus(t, r, http.StatusOK)
	opts, err := virtualwebauthn.ParseAttestationOptions(string(r.Body))
	if err != nil {
		t.Fatalf("registration options %s: %v", r.Body, err)
	}
	// The parser decodes user.id, the user handle.
	d.Auth.Options.UserHandle = []byte(opts.UserID)
	return virtualwebauthn.CreateAttestationResponse(d.Rp, d.Auth, d.Cred, *opts)
}

// assert answers the authentication options of r.
func (d *PkDevice) Assert(t testing.TB, r *Response) string {
	t.Helper()
	MustStatus(t, r, http.StatusOK)
	opts, err := virtualwebauthn.ParseAssertionOptions(string(r.Body))
	if err != nil {
		t.Fatalf("authentication options %s: %v", r.Body, err)
	}
	return virtualwebauthn.CreateAssertionResponse(d.Rp, d.Auth, d.Cred, *opts)
}

func PkBody(t testing.TB, response string, extra ...any) string {
	t.Helper()
	body := map[string]any{"response": json.RawMessage(response)}
	for i := 0; i+1 < len(extra); i += 2 {
		body[extra[i].(string)] = extra[i+1]
	}
	return MustJSON(t, body)
}

// MustRegister registers d's passkey as name for c's user and returns the
// stored row.
func MustRegister(t testing.TB, c *Client, d *PkDevice, name string) map[string]any {
	t.Helper()
	att := d.Attest(t, c.Get("/api/auth/passkey/generate-register-options"))
	return MustOK(t, c.Post("/api/auth/passkey/verify-registration", PkBody(t, att, "name", name)))
}

// PasskeySignIn runs an authentication ceremony with d through c.
func PasskeySignIn(t testing.TB, c *Client, d *PkDevice) *Response {
	t.Helper()
	as := d.Assert(t, c.Get("/api/auth/passkey/generate-authenticate-options"))
	return c.Post("/api/auth/passkey/verify-authentication", PkBody(t, as))
}

// MustPasskeyUser signs email up and registers a passkey, returning the
// signed-in client and the device.
func MustPasskeyUser(t *testing.T, app *App, email string) (*Client, *PkDevice) {
	t.Helper()
	c := app.NewClient(t)
	MustSignUp(t, c, "Ada", email, TfPassword)
	d := NewDevice()
	MustRegister(t, c, d, "Laptop")
	return c, d
}
