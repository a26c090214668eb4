package dnsresolver_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/adapters/dnsresolver"
	"github.com/gatehouse/gatehouse/adapters/dnsresolver/dnstest"
)

// mustResolver starts a dnstest server and returns a resolver asking it.
func mustResolver(t *testing.T) (*dnsresolver.Resolver, *dnstest.Server) {
	t.Helper()
	srv := dnstest.Start(t)
	r, err := dnsresolver.New(dnsresolver.Config{Nameserver: srv.Addr(), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return r, srv
}

// Ensure TXT lookups answer the values at the name, nothing (and no error)
// for a missing name or record, and an error when the lookup itself fails.
func TestResolver_LookupTXT(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 300) // two strings in one record, joined
	tests := []struct {
		name  string
		setup func(s *dnstest.Server)
		query string
		want  []string
	}{
		{"one_record", func(s *dnstest.Server) { s.SetTXT("_c.example.com", "v=1") }, "_c.example.com", []string{"v=1"}},
		{"several_records", func(s *dnstest.Server) { s.SetTXT("_c.example.com", "a", "b") }, "_c.example.com", []string{"a", "b"}},
		{"strings_of_one_record_are_joined", func(s *dnstest.Server) { s.SetTXT("_c.example.com", long) }, "_c.example.com", []string{long}},
		{"name_is_case_insensitive_and_may_be_rooted", func(s *dnstest.Server) { s.SetTXT("_c.example.com", "v=1") }, "_C.Example.COM.", []string{"v=1"}},
		{"nxdomain_is_empty", func(s *dnstest.Server) { s.SetTXT("_c.example.com", "v=1") }, "_d.example.com", nil},
		{"nodata_is_empty", func(s *dnstest.Server) { s.SetA("_c.example.com", "192.0.2.1") }, "_c.example.com", nil},
		{"empty_non_terminal_is_empty", func(s *dnstest.Server) { s.SetTXT("a.b.example.com", "v") }, "b.example.com", nil},
		{"alias_is_followed", func(s *dnstest.Server) {
			s.SetCNAME("_c.example.com", "_c.example.net")
			s.SetTXT("_c.example.net", "delegated")
		}, "_c.example.com", []string{"delegated"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, srv := mustResolver(t)
			tt.setup(srv)
			got, err := r.LookupTXT(t.Context(), tt.query)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("LookupTXT(%q) = %q, %v; want %q, nil", tt.query, got, err, tt.want)
			}
		})
	}
}

// Ensure the TXT lookup falls back to TCP when the UDP answer is truncated:
// both when the records exceed the EDNS0 size and when the server truncates
// everything.
func TestResolver_LookupTXT_truncated_answers_retry_over_TCP(t *testing.T) {
	t.Parallel()
	r, srv := mustResolver(t)
	var many []string
	for i := range 12 {
		many = append(many, strings.Repeat(string(rune('a'+i)), 200)) // ~2.5 KB in all, above 1232
	}
	srv.SetTXT("_big.example.com", many...)
	got, err := r.LookupTXT(t.Context(), "_big.example.com")
	if err != nil || len(got) != len(many) {
		t.Fatalf("LookupTXT = %d values, %v; want %d", len(got), err, len(many))
	}
	slices.Sort(got)
	if !slices.Equal(got, many) {
		t.Fatal("the values differ from those served")
	}
	if n := srv.Queries("_big.example.com", "TXT"); n < 2 {
		t.Fatalf("%d TXT queries, want a UDP one and a TCP one", n)
	}

	srv.TruncateUDP(true)
	srv.SetTXT("_small.example.com", "v=1")
	if got, err := r.LookupTXT(t.Context(), "_small.example.com"); err != nil || !slices.Equal(got, []string{"v=1"}) {
		t.Fatalf("LookupTXT with UDP truncated = %q, %v", got, err)
	}
}

// Ensure a CNAME lookup answers the target of the record at the name: the
// first hop of a chain, every time, whether or not the target resolves, and
// "" (no error) for a name without a CNAME or that does not exist.
func TestResolver_LookupCNAME(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(s *dnstest.Server)
		query string
		want  string
	}{
		{"direct", func(s *dnstest.Server) {
			s.SetCNAME("shop.example.com", "edge.gatehouse.test")
			s.SetA("edge.gatehouse.test", "192.0.2.1")
		}, "shop.example.com", "edge.gatehouse.test"},
		{"first_hop_of_a_chain", func(s *dnstest.Server) {
			s.SetCNAME("shop.example.com", "edge.gatehouse.test")
			s.SetCNAME("edge.gatehouse.test", "lb-7.cloud.test")
			s.SetA("lb-7.cloud.test", "192.0.2.7", "2001:db8::7")
		}, "shop.example.com", "edge.gatehouse.test"},
		{"target_without_addresses", func(s *dnstest.Server) { s.SetCNAME("shop.example.com", "edge.gatehouse.test") }, "shop.example.com", "edge.gatehouse.test"},
		{"name_is_case_insensitive_and_may_be_rooted", func(s *dnstest.Server) { s.SetCNAME("shop.example.com", "Edge.Gatehouse.Test") }, "SHOP.example.com.", "edge.gatehouse.test"},
		{"address_records_only", func(s *dnstest.Server) { s.SetA("shop.example.com", "192.0.2.1") }, "shop.example.com", ""},
		{"nxdomain", func(s *dnstest.Server) { s.SetA("www.example.com", "192.0.2.1") }, "shop.example.com", ""},
		{"nodata", func(s *dnstest.Server) { s.SetTXT("shop.example.com", "hello") }, "shop.example.com", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, srv := mustResolver(t)
			tt.setup(srv)
			for range 10 { // the same answer every time
				got, err := r.LookupCNAME(t.Context(), tt.query)
				if err != nil || got != tt.want {
					t.Fatalf("LookupCNAME(%q) = %q, %v; want %q, nil", tt.query, got, err, tt.want)
				}
			}
			if n := srv.Queries(tt.query, ""); n != 10 {
				t.Fatalf("%d queries for 10 lookups, want one each (type CNAME only)", n)
			}
		})
	}
}

// Ensure the CNAME lookup falls back to TCP when the UDP answer is truncated.
func TestResolver_LookupCNAME_truncated_answers_retry_over_TCP(t *testing.T) {
	t.Parallel()
	r, srv := mustResolver(t)
	srv.SetCNAME("shop.example.com", "edge.gatehouse.test")
	srv.TruncateUDP(true)
	if got, err := r.LookupCNAME(t.Context(), "shop.example.com"); err != nil || got != "edge.gatehouse.test" {
		t.Fatalf("LookupCNAME with UDP truncated = %q, %v", got, err)
	}
	if n := srv.Queries("shop.example.com", "CNAME"); n != 2 {
		t.Fatalf("%d CNAME queries, want one over UDP and one over TCP", n)
	}
}

// Ensure a failed lookup (SERVFAIL, no answer in time) is an error, never an
// empty answer, and that a timeout is bounded by the configured timeout.
func TestResolver_failures_are_errors(t *testing.T) {
	t.Parallel()
	srv := dnstest.Start(t)
	r, err := dnsresolver.New(dnsresolver.Config{Nameserver: srv.Addr(), Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetTXT("_c.fail.example", "v=1")
	srv.SetCNAME("fail.example", "edge.gatehouse.test")
	srv.SetTXT("_c.drop.example", "v=1")
	srv.SetCNAME("drop.example", "edge.gatehouse.test")
	srv.ServFail("_c.fail.example", true)
	srv.ServFail("fail.example", true)
	srv.Drop("_c.drop.example", true)
	srv.Drop("drop.example", true)
	for _, name := range []string{"_c.fail.example", "_c.drop.example"} {
		start := time.Now()
		if got, err := r.LookupTXT(t.Context(), name); err == nil {
			t.Errorf("LookupTXT(%s) = %q, nil; want an error", name, got)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("LookupTXT(%s) took %s with a 300ms timeout", name, d)
		}
	}
	for _, name := range []string{"fail.example", "drop.example"} {
		start := time.Now()
		if got, err := r.LookupCNAME(t.Context(), name); err == nil {
			t.Errorf("LookupCNAME(%s) = %q, nil; want an error", name, got)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("LookupCNAME(%s) took %s with a 300ms timeout", name, d)
		}
	}
	// Healed, the same names answer again.
	srv.ServFail("_c.fail.example", false)
	srv.ServFail("fail.example", false)
	if got, err := r.LookupTXT(t.Context(), "_c.fail.example"); err != nil || !slices.Equal(got, []string{"v=1"}) {
		t.Fatalf("LookupTXT after healing = %q, %v", got, err)
	}
	if got, err := r.LookupCNAME(t.Context(), "fail.example"); err != nil || got != "edge.gatehouse.test" {
		t.Fatalf("LookupCNAME after healing = %q, %v", got, err)
	}
	// A cancelled context fails at once.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.LookupCNAME(ctx, "fail.example"); err == nil {
		t.Fatal("LookupCNAME with a cancelled context succeeded")
	}
	if _, err := r.LookupTXT(ctx, "_c.fail.example"); err == nil {
		t.Fatal("LookupTXT with a cancelled context succeeded")
	}
}

// Ensure the nameserver setting is checked and normalised.
func TestParseNameserver(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"", "", true},
		{"127.0.0.1:5353", "127.0.0.1:5353", true},
		{"10.0.0.2", "10.0.0.2:53", true},
		{"::1", "[::1]:53", true},
		{"[2001:db8::1]:53", "[2001:db8::1]:53", true},
		{"dns.internal:53", "dns.internal:53", true},
		{"dns.internal", "", false},
		{"127.0.0.1:0", "", false},
		{"127.0.0.1:70000", "", false},
		{"127.0.0.1:dns", "", false},
		{":53", "", false},
	}
	for _, tt := range tests {
		got, err := dnsresolver.ParseNameserver(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseNameserver(%q) = %q, %v; want %q, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
	if _, err := dnsresolver.New(dnsresolver.Config{Nameserver: "nope"}); err == nil {
		t.Error("New accepted a bad nameserver")
	}
}
