package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse/application/federation"
	"github.com/gatehouse/gatehouse/bootstrap"
	"github.com/gatehouse/gatehouse/domain"
)

const identityProviderUsage = `Usage: gatehouse identity-provider put --id ID [--preset P] [--issuer URL] [--client-id C] [--client-secret-stdin]
                                     [--name N] [--scopes S,S…] [--trusted-for-linking true|false] [--enabled true|false]
                                     [--authorization-url U] [--token-url U] [--userinfo-url U] [--jwks-url U] [--api-url U]
                                     [service flags]
       gatehouse identity-provider list [service flags]
       gatehouse identity-provider delete --id ID [service flags]

put creates the provider, or changes the fields given of an existing one.
A new provider needs --preset (oidc, google, microsoft, gitlab or github),
--client-id and the client secret on standard input (--client-secret-stdin):
it is sealed at once and never shown again. OpenID presets need --issuer
(google and gitlab have a default; Microsoft's is
https://login.microsoftonline.com/<tenant>/v2.0). The endpoint flags
override discovery or the preset, for tests and air-gapped sites.

put prints the redirect URI to register at the provider. list prints every
provider; delete removes one with every account linked through it. Each
change is recorded in the audit log.
`

func identityProvider(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 || (args[0] != "put" && args[0] != "list" && args[0] != "delete") {
		_, err := io.WriteString(stdout, identityProviderUsage)
		if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
			return err
		}
		return fmt.Errorf("unknown identity-provider command %q", args[0])
	}
	sub := args[0]
	readSecret := false
	var kept []string
	for _, a := range args[1:] {
		if a == "--client-secret-stdin" || a == "-client-secret-stdin" {
			readSecret = true
			continue
		}
		kept = append(kept, a)
	}
	values, rest, err := takeFlags(kept, "id", "preset", "issuer", "client-id", "name", "scopes", "trusted-for-linking", "enabled",
		"authorization-url", "token-url", "userinfo-url", "jwks-url", "api-url")
	if err != nil {
		return err
	}
	if asksHelp(rest) {
		_, err := io.WriteString(stdout, identityProviderUsage)
		return err
	}
	if sub != "list" && values["id"] == "" {
		return fmt.Errorf("identity-provider %s needs --id", sub)
	}
	in, err := providerInput(values)
	if err != nil {
		return err
	}
	if readSecret {
		if sub != "put" {
			return errors.New("--client-secret-stdin is a flag of identity-provider put")
		}
		line, err := bufio.NewReader(io.LimitReader(stdin, 8192)).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading the client secret: %w", err)
		}
		if in.ClientSecret = strings.TrimRight(line, "\r\n"); in.ClientSecret == "" {
			return errors.New("the client secret on standard input is empty")
		}
	}
	app, _, cleanup, err := startApp(ctx, "gatehouse identity-provider "+sub, rest, getenv, stdout)
	if err != nil || app == nil {
		return err
	}
	defer cleanup()
	switch sub {
	case "list":
		ps, err := app.IdentityProviders(ctx)
		if err != nil {
			return bootstrap.DescribeError(err)
		}
		for _, p := range ps {
			state := "enabled"
			if !p.Enabled {
				state = "disabled"
			}
			scope := "platform"
			if p.OrganizationID != "" {
				scope = "organization " + string(p.OrganizationID)
			}
			fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\t%s\n", p.ID, p.Preset, state, scope, p.Name)
		}
		return nil
	case "delete":
		if err := app.DeleteIdentityProvider(ctx, in.ID); err != nil {
			return bootstrap.DescribeError(err)
		}
		fmt.Fprintf(stdout, "identity provider %q deleted\n", in.ID)
		return nil
	}
	p, err := app.PutIdentityProvider(ctx, in)
	if err != nil {
		return bootstrap.DescribeError(err)
	}
	fmt.Fprintf(stdout, "identity provider %q (%s) saved\nredirect URI to register at the provider: %s\n", p.ID, p.Preset, app.IdentityProviderCallback(string(p.ID)))
	return nil
}

// providerInput turns the flags into the use case's input: absent flags
// keep the provider's values.
func providerInput(values map[string]string) (federation.ProviderInput, error) {
	in := federation.ProviderInput{ID: values["id"]}
	opt := func(name string) *string {
		if v, ok := values[name]; ok {
			return &v
		}
		return nil
	}
	in.Preset, in.Issuer, in.ClientID, in.Name = opt("preset"), opt("issuer"), opt("client-id"), opt("name")
	if v, ok := values["scopes"]; ok {
		scopes := strings.Split(v, ",")
		in.Scopes = &scopes
	}
	for _, b := range []struct {
		name string
		dst  **bool
	}{{"trusted-for-linking", &in.TrustedForLinking}, {"enabled", &in.Enabled}} {
		if v, ok := values[b.name]; ok {
			on, err := strconv.ParseBool(v)
			if err != nil {
				return in, fmt.Errorf("--%s must be true or false", b.name)
			}
			*b.dst = &on
		}
	}
	var e domain.IdentityProviderEndpoints
	set := false
	for name, dst := range map[string]*string{"authorization-url": &e.Authorization, "token-url": &e.Token, "userinfo-url": &e.UserInfo,
		"jwks-url": &e.JWKS, "api-url": &e.API} {
		if v, ok := values[name]; ok {
			*dst, set = v, true
		}
	}
	if set {
		in.Endpoints = &e
	}
	return in, nil
}
