package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	appadmin "github.com/gatehouse/gatehouse/application/admin"
	"github.com/gatehouse/gatehouse/application/servicekey"
	"github.com/gatehouse/gatehouse/bootstrap"
	"github.com/gatehouse/gatehouse/domain"
)

// takeFlags removes the named flags (--name value or --name=value) from
// args and returns their values and the remaining arguments, which are the
// service's configuration flags.
func takeFlags(args []string, names ...string) (map[string]string, []string, error) {
	values := map[string]string{}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		matched := false
		for _, n := range names {
			for _, prefix := range []string{"--" + n, "-" + n} {
				switch {
				case a == prefix:
					if i+1 >= len(args) {
						return nil, nil, fmt.Errorf("flag %s needs a value", prefix)
					}
					values[n], matched = args[i+1], true
					i++
				case strings.HasPrefix(a, prefix+"="):
					values[n], matched = strings.TrimPrefix(a, prefix+"="), true
				}
				if matched {
					break
				}
			}
			if matched {
				break
			}
		}
		if !matched {
			rest = append(rest, a)
		}
	}
	return values, rest, nil
}

// takeSwitch removes a boolean flag from args and reports whether it was there.
func takeSwitch(args []string, name string) (bool, []string) {
	var rest []string
	found := false
	for _, a := range args {
		if a == "--"+name || a == "-"+name || a == "--"+name+"=true" {
			found = true
			continue
		}
		rest = append(rest, a)
	}
	return found, rest
}

const adminUsage = `Usage: gatehouse admin create --email E --name N [--password-stdin] [service flags]

Creates a platform administrator with a verified address, or promotes the
existing account with that address. With --password-stdin the password is read
from the first line of standard input; otherwise a one-time token to set it is
printed. The action is recorded in the audit log.
`

// startApp loads the configuration from the remaining flags and wires the
// service on its database without serving.
func startApp(ctx context.Context, name string, args []string, getenv func(string) string, stdout io.Writer) (*bootstrap.App, bootstrap.Config, func(), error) {
	cfg, done, err := loadConfig(name, args, getenv, stdout)
	if done || err != nil {
		return nil, cfg, nil, err
	}
	createdDir, err := prepareFiles(&cfg)
	if err != nil {
		return nil, cfg, nil, err
	}
	fmt.Fprint(stdout, createdDir)
	logger := bootstrap.NewLogger(cfg, io.Discard)
	app, cleanup, err := bootstrap.InitializeSQL(ctx, cfg, logger)
	if err != nil {
		return nil, cfg, nil, fmt.Errorf("start: %w", err)
	}
	return app, cfg, cleanup, nil
}

func admin(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		_, err := io.WriteString(stdout, adminUsage)
		if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
			return err
		}
		return fmt.Errorf("unknown admin command %q", args[0])
	}
	fromStdin, rest := takeSwitch(args[1:], "password-stdin")
	values, rest, err := takeFlags(rest, "email", "name")
	if err != nil {
		return err
	}
	if asksHelp(rest) {
		_, err := io.WriteString(stdout, adminUsage)
		return err
	}
	if values["email"] == "" || values["name"] == "" {
		return errors.New("admin create needs --email and --name")
	}
	cmd := appadmin.BootstrapAdmin{Email: values["email"], Name: values["name"]}
	if fromStdin {
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read password: %w", err)
		}
		if cmd.Password = strings.TrimRight(line, "\r\n"); cmd.Password == "" {
			return errors.New("--password-stdin: standard input held no password")
		}
	}
	app, cfg, cleanup, err := startApp(ctx, "gatehouse admin create", rest, getenv, stdout)
	if err != nil || app == nil {
		return err
	}
	defer cleanup()
	res, err := app.BootstrapAdmin(ctx, cmd)
	if err != nil {
		return bootstrap.DescribeError(err)
	}
	verb := "promoted"
	if res.Created {
		verb = "created"
	}
	fmt.Fprintf(stdout, "administrator %s %s (id %s)\n", res.User.Email(), verb, res.User.ID())
	if res.SetPasswordToken != "" {
		fmt.Fprintf(stdout, "No password was given. Within the next hour, set one with this one-time token:\n\n"+
			"  curl -X POST %s/api/auth/reset-password -H 'Content-Type: application/json' -H 'Origin: %s' \\\n"+
			"    -d '{\"token\":\"%s\",\"newPassword\":\"…\"}'\n",
			cfg.HTTP.BaseURL, cfg.HTTP.BaseURL, res.SetPasswordToken)
	}
	if cfg.Admin.RequireMFA {
		fmt.Fprintf(stdout, "Administrators must use a second factor here (GATEHOUSE_ADMIN_REQUIRE_MFA): until %s sets one up, "+
			"every administration route answers 403 ADMIN_MFA_REQUIRED.\n"+
			"Next step: sign in at %s/account/security, the account's security page, and set up an authenticator app or a passkey there.\n",
			res.User.Email(), cfg.HTTP.BaseURL)
	}
	return nil
}

const serviceKeyUsage = `Usage: gatehouse service-key create --name N --scopes S[,S…] [--expires-in DURATION] [service flags]

Issues a service key for a trusted backend and prints its secret, which is
shown this once (only its hash is stored). Scopes: users:read, users:write,
organizations:read, organizations:write, domains:read, domains:write,
webhooks:read, webhooks:write, or *.
The action is recorded in the audit log.
`

func serviceKey(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		_, err := io.WriteString(stdout, serviceKeyUsage)
		if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
			return err
		}
		return fmt.Errorf("unknown service-key command %q", args[0])
	}
	values, rest, err := takeFlags(args[1:], "name", "scopes", "expires-in")
	if err != nil {
		return err
	}
	if asksHelp(rest) {
		_, err := io.WriteString(stdout, serviceKeyUsage)
		return err
	}
	if values["name"] == "" || values["scopes"] == "" {
		return errors.New("service-key create needs --name and --scopes")
	}
	cmd := servicekey.CreateServiceKey{Name: values["name"], Scopes: strings.Split(values["scopes"], ",")}
	if v := values["expires-in"]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("--expires-in must be a positive duration such as 720h")
		}
		cmd.ExpiresAt = time.Now().Add(d)
	}
	app, _, cleanup, err := startApp(ctx, "gatehouse service-key create", rest, getenv, stdout)
	if err != nil || app == nil {
		return err
	}
	defer cleanup()
	k, err := app.CreateServiceKey(ctx, cmd)
	if err != nil {
		// The service's refusal (audited) does not repeat values; name the scope here.
		for _, sc := range cmd.Scopes {
			if _, perr := domain.ParseScopes([]string{sc}, "scopes"); perr != nil {
				return fmt.Errorf("unknown scope %q; use users:read, users:write, organizations:read, organizations:write, domains:read, domains:write, webhooks:read, webhooks:write or *", sc)
			}
		}
		return bootstrap.DescribeError(err)
	}
	fmt.Fprintf(stdout, "service key %q (id %s) created\n%s\n", k.Key.Name(), k.Key.ID(), k.Secret)
	return nil
}
