package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	upstream "github.com/gatehouse/gatehouse/adapters/federation"
	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/application/usecase"
	"github.com/gatehouse/gatehouse/domain"
	"github.com/gatehouse/gatehouse/ports"
)

// FederationConfig is the section of upstream identity providers: the
// optional file that declares them, for sites that keep configuration in
// Git. Providers are otherwise managed at runtime (admin API, command line).
type FederationConfig struct {
	ProvidersFile string
	// providers are the file's entries, read and checked with the rest of
	// the configuration (secrets included).
	providers []federation.ProviderInput
}

var federationSettingList settingList

var settingProvidersFile = federationSettingList.add("GATEHOUSE_IDENTITY_PROVIDERS_FILE", "identity-providers-file", "",
	"a YAML file of upstream identity providers, applied at every start (created, or updated field by field); see docs/federation.md")

func (f *FederationConfig) load(r *reader) {
	f.ProvidersFile = strings.TrimSpace(r.text(settingProvidersFile))
	if f.ProvidersFile == "" {
		return
	}
	var err error
	if f.providers, err = readProvidersFile(f.ProvidersFile, r.get); err != nil {
		r.fail(settingProvidersFile, err.Error())
	}
}

// federationSettings are the federation's rules.
func federationSettings(a usecase.AuthSettings) federation.Settings {
	return federation.Settings{Auth: a}
}

// upstreamTimeout bounds every call to an upstream provider.
const upstreamTimeout = 10 * time.Second

// federationClient talks to upstream providers over its own HTTP client.
func federationClient(clock ports.Clock) *upstream.Client {
	return upstream.NewClient(&http.Client{Timeout: upstreamTimeout}, clock)
}

// UpstreamKeySetStats counts the ID tokens verified against upstream key
// sets and the key-set fetches they needed: 1 - fetches/verifications is
// the cache's hit rate.
func (a *App) UpstreamKeySetStats() (verifications, fetches uint64) {
	return a.upstream.KeySetStats()
}

// providerFileEntry is one provider of the providers file. The secret comes
// from the environment or a file, never from the file itself in Git:
// clientSecretEnv names a variable, clientSecretFile a file (such as a
// mounted secret); clientSecret is accepted for local tries.
type providerFileEntry struct {
	ID               string   `yaml:"id"`
	Preset           string   `yaml:"preset"`
	Name             *string  `yaml:"name"`
	Issuer           *string  `yaml:"issuer"`
	ClientID         *string  `yaml:"clientId"`
	ClientSecret     string   `yaml:"clientSecret"`
	ClientSecretEnv  string   `yaml:"clientSecretEnv"`
	ClientSecretFile string   `yaml:"clientSecretFile"`
	Scopes           []string `yaml:"scopes"`
	Endpoints        *struct {
		Authorization string `yaml:"authorization"`
		Token         string `yaml:"token"`
		UserInfo      string `yaml:"userinfo"`
		JWKS          string `yaml:"jwks"`
		API           string `yaml:"api"`
	} `yaml:"endpoints"`
	TrustedForLinking *bool    `yaml:"trustedForLinking"`
	Enabled           *bool    `yaml:"enabled"`
	OrganizationID    *string  `yaml:"organizationId"`
	Domains           []string `yaml:"domains"`
	DefaultRole       *string  `yaml:"defaultRole"`
	RequireSSO        *bool    `yaml:"requireSso"`
}

// maxProvidersFile bounds the providers file.
const maxProvidersFile = 1 << 20

// readProvidersFile reads and checks the providers file: every entry needs
// an id and a preset, and a secret from exactly one source.
func readProvidersFile(path string, getenv func(string) string) ([]federation.ProviderInput, error) {
	raw, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return nil, fmt.Errorf("cannot read it: %w", err)
	}
	if len(raw) > maxProvidersFile {
		return nil, errors.New("is larger than 1 MiB")
	}
	var doc struct {
		Providers []providerFileEntry `yaml:"providers"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("is not a valid providers file: %w", err)
	}
	seen := map[string]bool{}
	out := make([]federation.ProviderInput, 0, len(doc.Providers))
	for i, e := range doc.Providers {
		at := fmt.Sprintf("providers[%d]", i)
		if e.ID == "" || e.Preset == "" {
			return nil, fmt.Errorf("%s: needs an id and a preset", at)
		}
		if seen[e.ID] {
			return nil, fmt.Errorf("%s: id %q appears twice", at, e.ID)
		}
		seen[e.ID] = true
		secret, err := e.secret(getenv)
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %w", at, e.ID, err)
		}
		preset := e.Preset
		in := federation.ProviderInput{ID: e.ID, Preset: &preset, Name: e.Name, Issuer: e.Issuer, ClientID: e.ClientID, ClientSecret: secret,
			TrustedForLinking: e.TrustedForLinking, Enabled: e.Enabled, OrganizationID: e.OrganizationID, DefaultRole: e.DefaultRole, RequireSSO: e.RequireSSO}
		if e.Scopes != nil {
			in.Scopes = &e.Scopes
		}
		if e.Domains != nil {
			in.Domains = &e.Domains
		}
		if ep := e.Endpoints; ep != nil {
			in.Endpoints = &domain.IdentityProviderEndpoints{Authorization: ep.Authorization, Token: ep.Token, UserInfo: ep.UserInfo, JWKS: ep.JWKS, API: ep.API}
		}
		out = append(out, in)
	}
	return out, nil
}

// secret reads the entry's client secret from its one source.
func (e providerFileEntry) secret(getenv func(string) string) (string, error) {
	n := 0
	for _, s := range []string{e.ClientSecret, e.ClientSecretEnv, e.ClientSecretFile} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return "", errors.New("give exactly one of clientSecret, clientSecretEnv and clientSecretFile")
	}
	switch {
	case e.ClientSecretEnv != "":
		v := strings.TrimSpace(getenv(e.ClientSecretEnv))
		if v == "" {
			return "", fmt.Errorf("the variable %s is empty or unset", e.ClientSecretEnv)
		}
		return v, nil
	case e.ClientSecretFile != "":
		b, err := os.ReadFile(filepath.Clean(e.ClientSecretFile))
		if err != nil {
			return "", fmt.Errorf("cannot read clientSecretFile: %w", err)
		}
		v := strings.TrimSpace(string(b))
		if v == "" {
			return "", errors.New("clientSecretFile is empty")
		}
		return v, nil
	}
	return e.ClientSecret, nil
}

// applyProvidersFile creates or updates the providers of the file, as the
// command line (audited as the CLI).
func applyProvidersFile(ctx context.Context, ps *federation.Providers, f FederationConfig) error {
	for _, in := range f.providers {
		if _, err := ps.Put(ctx, usecase.KeyRequest{Actor: usecase.CLIActor}, in); err != nil {
			return fmt.Errorf("%s: provider %q: %w", settingProvidersFile.env, in.ID, DescribeError(err))
		}
	}
	return nil
}

// DescribeError spells out a domain error for a person at a terminal: its
// message and each field violation. An internal error is returned as is.
func DescribeError(err error) error {
	var de *domain.Error
	if !errors.As(err, &de) || de.Kind == domain.KindInternal {
		return err
	}
	msg := de.Message
	for _, f := range de.Fields {
		msg += "; " + f.Field + " " + f.Message
	}
	return errors.New(msg)
}

// IdentityProviders lists the upstream identity providers (the command
// line).
func (a *App) IdentityProviders(ctx context.Context) ([]domain.IdentityProvider, error) {
	return a.app.Federation.Providers.List(ctx, usecase.KeyRequest{Actor: usecase.CLIActor})
}

// PutIdentityProvider creates a provider, or updates the fields given of an
// existing one (the command line; audited as the CLI).
func (a *App) PutIdentityProvider(ctx context.Context, in federation.ProviderInput) (domain.IdentityProvider, error) {
	return a.app.Federation.Providers.Put(ctx, usecase.KeyRequest{Actor: usecase.CLIActor}, in)
}

// DeleteIdentityProvider deletes a provider with its linked accounts (the
// command line; audited as the CLI).
func (a *App) DeleteIdentityProvider(ctx context.Context, id string) error {
	return a.app.Federation.Providers.Delete(ctx, usecase.KeyRequest{Actor: usecase.CLIActor}, id)
}

// IdentityProviderCallback is the redirect URI to register at provider id.
func (a *App) IdentityProviderCallback(id string) string {
	return a.app.Federation.SignIns.RedirectURI(domain.IdentityProviderID(id))
}
