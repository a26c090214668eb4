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
		{"serve_help_lists_settings", []string{"serve", "-h"}, "GATEHOUSE_DATABASE_URL", true},
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
