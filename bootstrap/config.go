package bootstrap

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Environment is development or production. Production refuses unsafe settings.
type Environment string

// The environments.
const (
	Development Environment = "development"
	Production  Environment = "production"
)

// Config is Gatehouse's whole configuration: what applies everywhere, then
// one section per part of the service. Each section declares its settings
// (variable, flag, default, meaning) in its own list and reads them with
// the typed helpers of reader, so that each variable is named once.
type Config struct {
	Env          Environment
	DataDir      string
	Secrets      []string // the first signs; all verify
	SecretSource string   // where the secrets came from, for the start-up line

	HTTP          HTTPConfig
	Database      DatabaseConfig
	Auth          AuthConfig
	Mail          MailConfig
	Admin         AdminConfig
	Organizations OrganizationConfig
	Domains       DomainConfig
	Tokens        TokenConfig
	Passkeys      PasskeyConfig
	Federation    FederationConfig
	Observability ObservabilityConfig
	Webhooks      WebhookConfig

	flags map[string]bool // the variables whose values came from flags
}

// generalSettingList are the settings every section depends on.
var generalSettingList settingList

var (
	settingEnv     = generalSettingList.add("GATEHOUSE_ENV", "env", "development", "development or production (production refuses unsafe settings)")
	settingDataDir = generalSettingList.add("GATEHOUSE_DATA_DIR", "data-dir", "./data", "directory for the default SQLite database and the generated development secret; created (0700, its parent must exist) when used")
	settingSecret  = generalSettingList.addSecret("GATEHOUSE_SECRET", "secret", "signing secret, at least 32 bytes (generated and kept in DATA_DIR in development)")
	settingSecrets = generalSettingList.addSecret("GATEHOUSE_SECRETS", "secrets", "comma-separated secrets for rotation: the first signs, all verify")
)

// allSettings lists every setting: the general ones, then each section's.
func allSettings() []*setting {
	var all []*setting
	for _, l := range []settingList{generalSettingList, httpSettingList, databaseSettingList, authSettingList, mailSettingList, adminSettingList,
		organizationSettingList, domainSettingList, tokenSettingList, passkeySettingList, federationSettingList, observabilitySettingList, webhookSettingList} {
		all = append(all, l...)
	}
	return all
}

// ConfigError names the setting that is wrong.
type ConfigError struct {
	Var  string // the environment variable, e.g. GATEHOUSE_BASE_URL
	Flag string // the flag, e.g. --base-url, when the value came from the command line
	Msg  string
}

func (e *ConfigError) Error() string { return "configuration: " + e.Setting() + ": " + e.Msg }

// Setting names the setting as the operator gave it: the flag if it was
// given on the command line, else the environment variable.
func (e *ConfigError) Setting() string {
	if e.Flag != "" {
		return e.Flag
	}
	return e.Var
}

// ConfigErrors is every problem LoadConfig found, in the order the
// sections are read (see buildConfig). Its message has one line per problem; errors.As finds each
// *ConfigError through Unwrap.
type ConfigErrors []*ConfigError

func (es ConfigErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the problems, for errors.Is and errors.As.
func (es ConfigErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// SettingError reports a problem with the setting env found after loading
// (a listen address already in use, say), naming its flag if the value
// came from the command line.
func (c Config) SettingError(env, msg string) *ConfigError {
	e := &ConfigError{Var: env, Msg: msg}
	if c.flags[env] {
		e.Flag = "--" + flagOf(env)
	}
	return e
}

func (c Config) settingError(s *setting, msg string) *ConfigError { return c.SettingError(s.env, msg) }

// problems collects a configuration's problems, so that one run reports
// them all.
type problems struct{ errs ConfigErrors }

// add records that the setting env is wrong.
func (p *problems) add(env, msg string) { p.errs = append(p.errs, &ConfigError{Var: env, Msg: msg}) }

// has reports whether the setting env was found wrong. What derives from a
// wrong setting is not checked, so that one mistake is reported once.
func (p *problems) has(env string) bool {
	for _, e := range p.errs {
		if e.Var == env {
			return true
		}
	}
	return false
}

func (p *problems) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	return p.errs
}

// MinSecretBytes is the shortest secret production accepts.
const MinSecretBytes = 32

// LoadConfig reads settings from flags in args, then the environment through
// getenv, then the defaults. It validates everything and reports every
// problem at once, as ConfigErrors, each naming the flag if the value came
// from the command line, else the variable. It writes no file; it only
// looks whether a SQLite database's directory exists (see EnsureDataDir and
// EnsureSecrets for what start-up creates).
func LoadConfig(name string, args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(usage)
	all := allSettings()
	values := map[string]*string{}
	for _, s := range all {
		def := getenv(s.env)
		if def == "" {
			def = s.def
		}
		help := s.usage + " (" + s.env + ")"
		if s.secret {
			help += "; prefer the variable: flags show in process lists"
		}
		if s.boolean {
			v := boolText(def)
			fs.Var(&v, s.flag, help)
			values[s.env] = (*string)(&v)
			continue
		}
		values[s.env] = fs.String(s.flag, def, help)
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, unexpectedArgument(args, fs.NArg(), all)
	}
	envOf := map[string]string{}
	for _, s := range all {
		envOf[s.flag] = s.env
	}
	fromFlags := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { fromFlags[envOf[f.Name]] = true })
	get := func(env string) string {
		if v, ok := values[env]; ok {
			return strings.TrimSpace(*v)
		}
		// A variable no setting declares: one the providers file names.
		return strings.TrimSpace(getenv(env))
	}
	c, err := buildConfig(get)
	c.flags = fromFlags
	var errs ConfigErrors
	if errors.As(err, &errs) {
		for _, e := range errs {
			if fromFlags[e.Var] {
				e.Flag = "--" + flagOf(e.Var)
			}
		}
	}
	return c, err
}

// unexpectedArgument describes the first of the n arguments left at the end
// of args once the flags are read. After a boolean flag written without "="
// (--rate-limit off), it says how to give the flag its value.
func unexpectedArgument(args []string, n int, all []*setting) error {
	arg := args[len(args)-n]
	if i := len(args) - n - 1; i >= 0 {
		name := strings.TrimLeft(args[i], "-")
		for _, s := range all {
			if s.boolean && s.flag == name {
				return fmt.Errorf("unexpected argument %q: --%s is a true-or-false flag, which takes a value after \"=\" (--%s=%s)", arg, name, name, arg)
			}
		}
	}
	return fmt.Errorf("unexpected argument %q", arg)
}

// flagOf returns the flag of the setting env, without dashes.
func flagOf(env string) string {
	for _, s := range allSettings() {
		if s.env == env {
			return s.flag
		}
	}
	return ""
}

// buildConfig reads every section. The base URL, once read, is what the
// sections that follow it derive their defaults from.
func buildConfig(get func(string) string) (Config, error) {
	var c Config
	r := &reader{get: get, p: &problems{}}
	switch env := Environment(r.text(settingEnv)); env {
	case Development, Production:
		c.Env = env
	default:
		c.Env = Development // the rest is checked as development checks it
		r.fail(settingEnv, "must be development or production")
	}
	r.env = c.Env
	c.HTTP.load(r)
	if c.DataDir = r.text(settingDataDir); c.DataDir == "" {
		r.fail(settingDataDir, "must not be empty")
	}
	c.Database.load(r, c.DataDir)
	c.loadSecrets(r)
	c.Auth.load(r)
	c.Mail.load(r)
	c.Admin.load(r)
	c.Organizations.load(r, c.HTTP.BaseURL)
	c.Domains.load(r)
	c.Tokens.load(r, c.HTTP.BaseURL)
	c.Passkeys.load(r, c.HTTP)
	c.Federation.load(r)
	c.Observability.load(r, c.HTTP.Addr)
	c.Webhooks.load(r)
	return c, r.p.err()
}

// sqliteInDataDir reports whether the database is a SQLite file directly
// in the data directory.
func (c Config) sqliteInDataDir() bool { return c.Database.sqliteIn(c.DataDir) }

func (c *Config) loadSecrets(r *reader) {
	single, list := r.text(settingSecret), r.text(settingSecrets)
	var source *setting
	switch {
	case single != "" && list != "":
		r.fail(settingSecrets, "set either "+settingSecret.env+" or "+settingSecrets.env+", not both")
		return
	case single != "":
		source = settingSecret
		c.Secrets, c.SecretSource = []string{single}, settingSecret.env
	case list != "":
		for s := range strings.SplitSeq(list, ",") {
			if s = strings.TrimSpace(s); s == "" {
				r.fail(settingSecrets, "has an empty entry")
				c.Secrets = nil
				return
			}
			c.Secrets = append(c.Secrets, s)
		}
		source = settingSecrets
		c.SecretSource = settingSecrets.env
	}
	if len(c.Secrets) == 0 && r.production() {
		r.fail(settingSecret, "must be set in production (at least 32 bytes; e.g. openssl rand -base64 48)")
	}
	for _, s := range c.Secrets {
		if r.production() && len(s) < MinSecretBytes {
			r.fail(source, fmt.Sprintf("each secret must be at least %d bytes in production", MinSecretBytes))
			break
		}
	}
}

// Settings describes every setting, for documentation: its variable, its
// flag, its default and what it means.
func Settings() [][4]string {
	all := allSettings()
	out := make([][4]string, len(all))
	for i, s := range all {
		out[i] = [4]string{s.env, "--" + s.flag, s.def, s.usage}
	}
	return out
}
