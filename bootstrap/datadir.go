package bootstrap

import (
	"errors"
	"io/fs"
	"os"
)

// EnsureDataDir creates the data directory, mode 0700, when this
// configuration keeps something in it (the SQLite database, or the
// development secret) and it does not exist yet. It creates that directory
// only: its parent must exist, and no other directory is ever created (a
// SQLite database elsewhere must have its directory already). It reports
// whether it created the directory, for the start-up line.
func EnsureDataDir(c Config) (bool, error) {
	if !c.sqliteInDataDir() && (c.Env == Production || len(c.Secrets) > 0) {
		return false, nil
	}
	err := os.Mkdir(c.DataDir, 0o700)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		if info, err := os.Stat(c.DataDir); err != nil || !info.IsDir() {
			return false, c.settingError(settingDataDir, c.DataDir+" is not a directory")
		}
		return false, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, c.settingError(settingDataDir, "cannot create "+c.DataDir+": its parent directory does not exist")
	default:
		return false, c.settingError(settingDataDir, "cannot create "+c.DataDir+": "+err.Error())
	}
}
