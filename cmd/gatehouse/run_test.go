package main

import (
	"context"
	"strings"
	"testing"
)

func runArgs(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out strings.Builder
	err := run(context.Background(), append([]string{"gatehouse"}, args...), func(string) string { return "" }, strings.NewReader(""), &out)
	return out.String(), err
}

func TestRun_commands(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		want   string
		wantOK bool
	}{
		{"version", []string{"version"}, "gatehouse dev", true},
		{"help", []string{"help"}, "Commands:", true},
		{"dash_h_is_the_summary", []string{"-h"}, "healthcheck", true},
		{"dash_dash_help_is_the_summary", []string{"--help"}, "healthcheck", true},
		{"serve_help_lists_settings", []string{"serve", "-h"}, "GATEHOUSE_DATABASE_URL", true},
		{"serve_dash_dash_help_lists_settings", []string{"serve", "--help"}, "GATEHOUSE_DATABASE_URL", true},
		{"healthcheck_help", []string{"healthcheck", "-h"}, "/api/auth/ok", true},
		{"admin_create_help", []string{"admin", "create", "--help"}, "Usage: gatehouse admin create", true},
		{"service_key_create_help", []string{"service-key", "create", "-h"}, "Usage: gatehouse service-key create", true},
		{"identity_provider_put_help", []string{"identity-provider", "put", "--help"}, "Usage: gatehouse identity-provider put", true},
		{"identity_provider_delete_help", []string{"identity-provider", "delete", "--help"}, "gatehouse identity-provider delete --id ID", true},
		{"admin_unknown_subcommand", []string{"admin", "remove", "--help"}, "Usage: gatehouse admin create", false},
		{"unknown_command", []string{"launch"}, "", false},
		{"unknown_flag", []string{"serve", "--nope"}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runArgs(t, tt.args...)
			if tt.wantOK != (err == nil) {
				t.Fatalf("run(%v) error = %v", tt.args, err)
			}
			if !strings.Contains(out, tt.want) {
				t.Fatalf("run(%v) printed %q, want it to contain %q", tt.args, out, tt.want)
			}
		})
	}
}

// Ensure "gatehouse -h" and "--help" print the command summary, the same as
// "gatehouse help", not serve's hundred lines of flags.
func TestRun_help_flags_print_the_summary(t *testing.T) {
	want, err := runArgs(t, "help")
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"-h", "--help", "-help"} {
		got, err := runArgs(t, flag)
		if err != nil || got != want {
			t.Fatalf("gatehouse %s printed %d lines (%v), want the summary of gatehouse help", flag, strings.Count(got, "\n"), err)
		}
	}
	if strings.Contains(want, "GATEHOUSE_DATABASE_URL") {
		t.Fatal("the summary lists serve's flags")
	}
}

func TestHealthURL(t *testing.T) {
	tests := []struct {
		addr, url, want string
		ok              bool
	}{
		{":8080", "", "http://127.0.0.1:8080/api/auth/ok", true},
		{"0.0.0.0:9090", "", "http://127.0.0.1:9090/api/auth/ok", true},
		{"[::]:9090", "", "http://127.0.0.1:9090/api/auth/ok", true},
		{"[::1]:9090", "", "http://[::1]:9090/api/auth/ok", true},
		{"localhost:9090", "", "http://localhost:9090/api/auth/ok", true},
		{"10.1.2.3:8080", "", "", false},
		{"nowhere", "", "", false},
		{":8080", "http://127.0.0.1:7000/api/auth/ok", "http://127.0.0.1:7000/api/auth/ok", true},
		{":8080", "https://127.0.0.1:7000/api/auth/ok", "", false},
		{":8080", "http://example.com/api/auth/ok", "", false},
		{":8080", "http://user:pw@127.0.0.1/api/auth/ok", "", false},
	}
	for _, tt := range tests {
		got, err := healthURL(tt.addr, tt.url)
		if tt.ok != (err == nil) || got != tt.want {
			t.Errorf("healthURL(%q, %q) = %q, %v; want %q ok=%v", tt.addr, tt.url, got, err, tt.want, tt.ok)
		}
	}
}
