package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// Ensure a metrics address that cannot be listened on stops the start,
// naming its setting (or flag), before anything is served.
func TestServe_metrics_address_in_use(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	env := map[string]string{"GATEHOUSE_ADDR": "127.0.0.1:0", "GATEHOUSE_DATA_DIR": dir}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out strings.Builder
	err = run(ctx, []string{"gatehouse", "serve", "--metrics-addr", taken.Addr().String()}, func(k string) string { return env[k] }, strings.NewReader(""), &out)
	if err == nil || !strings.Contains(err.Error(), "--metrics-addr") {
		t.Fatalf("err = %v, want a problem naming --metrics-addr", err)
	}
	if strings.Contains(out.String(), "serving") {
		t.Fatalf("the start-up lines were printed before the refusal:\n%s", out.String())
	}
}
