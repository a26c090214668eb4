// Package blocklist implements ports.PasswordBlocklist on a list of common
// passwords embedded in the binary. SOURCE.md names where the list comes from
// and how it was filtered.
package blocklist
