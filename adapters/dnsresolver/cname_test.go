package dnsresolver

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Ensure the system's nameservers are read from resolv.conf, with Go's
// default when it names none.
func TestNameserversFrom(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	conf := filepath.Join(dir, "resolv.conf")
	content := "# comment\nsearch example.com\nnameserver 10.0.0.2\nnameserver fe80::1%eth0\nnameserver not-an-ip\noptions ndots:2\nnameserver 2001:db8::53\n"
	if err := os.WriteFile(conf, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := nameserversFrom(conf), []string{"10.0.0.2:53", "[fe80::1%eth0]:53", "[2001:db8::53]:53"}; !slices.Equal(got, want) {
		t.Fatalf("nameserversFrom = %q, want %q", got, want)
	}
	if got, want := nameserversFrom(filepath.Join(dir, "missing")), []string{"127.0.0.1:53", "[::1]:53"}; !slices.Equal(got, want) {
		t.Fatalf("nameserversFrom(missing) = %q, want %q", got, want)
	}
}
