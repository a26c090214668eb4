package bootstrap

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// secretFile is where development keeps its generated secret.
const secretFile = "secret"

// EnsureSecrets gives a development configuration without a secret one that
// survives restarts: read from DATA_DIR/secret, or generated there (0600) on
// first start. Production never gets here without a secret (LoadConfig
// refuses), and a configured secret is never written anywhere. The data
// directory must exist: call EnsureDataDir first.
func EnsureSecrets(c *Config) error {
	if len(c.Secrets) > 0 {
		return nil
	}
	if c.Env == Production {
		return c.settingError(settingSecret, "must be set in production")
	}
	path := filepath.Join(c.DataDir, secretFile)
	b, err := os.ReadFile(path) // #nosec G304 -- the operator's GATEHOUSE_DATA_DIR and a fixed file name
	switch {
	case err == nil:
		s := strings.TrimSpace(string(b))
		if len(s) < MinSecretBytes {
			return c.settingError(settingDataDir, fmt.Sprintf("%s holds a secret shorter than %d bytes", path, MinSecretBytes))
		}
		c.Secrets, c.SecretSource = []string{s}, path
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return c.settingError(settingDataDir, "cannot read "+path+": "+err.Error())
	}
	var raw [48]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return err
	}
	s := base64.RawURLEncoding.EncodeToString(raw[:])
	// Written whole to a file of its own, then linked into place, which
	// fails if the name exists: of processes starting together on one data
	// directory (replicas sharing a volume), one publishes its secret and
	// the others read that one, never a file still being written.
	tmp, err := os.CreateTemp(c.DataDir, secretFile+".*")
	if err != nil {
		return c.settingError(settingDataDir, "cannot write in "+c.DataDir+": "+err.Error())
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.WriteString(s + "\n"); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), path); errors.Is(err, fs.ErrExist) {
		return EnsureSecrets(c)
	} else if err != nil {
		return c.settingError(settingDataDir, "cannot write "+path+": "+err.Error())
	}
	c.Secrets, c.SecretSource = []string{s}, path+" (generated)"
	return nil
}
