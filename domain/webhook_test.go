package domain_test

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/domain"
)

// TestSignWebhook_matches_the_specification signs the example of the
// Standard Webhooks libraries' own tests.
func TestSignWebhook_matches_the_specification(t *testing.T) {
	key, ok := domain.ParseWebhookSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if !ok {
		t.Fatal("the specification's secret does not parse")
	}
	got := domain.SignWebhook(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("signature = %s, want %s", got, want)
	}
	if domain.WebhookSecret(key) != "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" {
		t.Fatal("WebhookSecret does not give the secret back")
	}
	for _, bad := range []string{"", "whsec_", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_not base64!"} {
		if _, ok := domain.ParseWebhookSecret(bad); ok {
			t.Errorf("ParseWebhookSecret(%q) accepted it", bad)
		}
	}
}

func TestIsPublicAddress(t *testing.T) {
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "93.184.216.34"} {
		if !domain.IsPublicAddress(netip.MustParseAddr(s)) {
			t.Errorf("%s is public, refused", s)
		}
	}
	for _, s := range []string{
		"127.0.0.1", "127.1.2.3", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1", "100.127.255.254",
		"0.0.0.0", "0.1.2.3", "224.0.0.1", "239.255.255.250", "255.255.255.255", "240.0.0.1", "198.18.0.1", "192.0.2.1",
		"::", "::1", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::127.0.0.1",
		"64:ff9b::a00:1", "2002:a00:1::", "2001:db8::1", "fe80::1%eth0",
	} {
		if domain.IsPublicAddress(netip.MustParseAddr(s)) {
			t.Errorf("%s is not public, allowed", s)
		}
	}
}

func TestCheckWebhookURL(t *testing.T) {
	ok := map[string]string{
		"https://hooks.example.com/in":          "https://hooks.example.com/in",
		" https://hooks.example.com:8443/a?b=c": "https://hooks.example.com:8443/a?b=c",
		"https://8.8.8.8/hook":                  "https://8.8.8.8/hook",
		"https://localhost/hook":                "https://localhost/hook", // a name: checked when connecting
		// Host names are stored as resolvers read them (UTS #46).
		"https://Hooks.Example.COM/In":      "https://hooks.example.com/In",
		"https://bücher.example:8443/hook":  "https://xn--bcher-kva.example:8443/hook",
		"https://hooks。example。com/in":      "https://hooks.example.com/in",
		"https://intranet_hooks.example/in": "https://intranet_hooks.example/in",
	}
	for in, want := range ok {
		got, err := domain.CheckWebhookURL(in, false)
		if err != nil || got != want {
			t.Errorf("CheckWebhookURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	refused := []string{
		"", "hooks.example.com/in", "http://hooks.example.com/in", "ftp://hooks.example.com/", "https:///path", "https://user:pw@hooks.example.com/",
		"https://hooks.example.com/#frag", "https://127.0.0.1/", "https://[::1]/", "https://[::ffff:127.0.0.1]/", "https://10.1.2.3/",
		"https://169.254.169.254/", "https://100.64.1.1/", "https://0.0.0.0/", "https://2130706433/", "https://0x7f.1/", "https://127.1/",
		"https://127。0。0。1/", "https://127．0．0．1/", "https://１２７.0.0.1/", "https://127%E3%80%820.0.1/", "https://0x7f｡1/", "https://10。1。2。3:8443/",
		"https://-bad.example/",
		"https://hooks.example.com/a b", "https://hooks.example.com:0/", "https://hooks.example.com:70000/",
		"https://hooks.example.com/" + strings.Repeat("a", 2048),
	}
	for _, in := range refused {
		_, err := domain.CheckWebhookURL(in, false)
		var de *domain.Error
		if err == nil || !asError(err, &de) || len(de.Fields) != 1 || de.Fields[0].Field != "url" || de.Kind != domain.KindInvalid {
			t.Errorf("CheckWebhookURL(%q) = %v, want invalid naming url", in, err)
		}
	}
	// Private targets allowed: http and private addresses pass.
	for _, in := range []string{"http://127.0.0.1:8080/hook", "http://localhost/hook", "https://10.1.2.3/"} {
		if _, err := domain.CheckWebhookURL(in, true); err != nil {
			t.Errorf("CheckWebhookURL(%q, allowPrivate) = %v", in, err)
		}
	}
}

func asError(err error, target **domain.Error) bool {
	e, ok := err.(*domain.Error)
	*target = e
	return ok
}

// TestWebhookEndpoint_disables_after_failing_with_no_success walks the
// failure bookkeeping: a failing streak starts at the first failure, a
// success ends it, and an endpoint failing with no success for the whole
// threshold is disabled at the next failure.
func TestWebhookEndpoint_disables_after_failing_with_no_success(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const after = 5 * 24 * time.Hour
	e := domain.WebhookEndpoint{Enabled: true}
	if changed, disabled := e.RecordFailure(t0, after); !changed || disabled || !e.FailingSince.Equal(t0) {
		t.Fatalf("first failure: changed %v disabled %v since %v", changed, disabled, e.FailingSince)
	}
	if changed, disabled := e.RecordFailure(t0.Add(time.Hour), after); changed || disabled {
		t.Fatal("a second failure changed something")
	}
	if !e.RecordSuccess(t0.Add(2*time.Hour)) || !e.FailingSince.IsZero() {
		t.Fatal("a success did not end the streak")
	}
	e.RecordFailure(t0.Add(3*time.Hour), after)
	if _, disabled := e.RecordFailure(t0.Add(3*time.Hour+after-time.Second), after); disabled {
		t.Fatal("disabled before the threshold")
	}
	if _, disabled := e.RecordFailure(t0.Add(3*time.Hour+after), after); !disabled || e.Enabled || e.DisabledReason != domain.WebhookDisabledFailing {
		t.Fatalf("not disabled at the threshold: %+v", e)
	}
	e.Enable()
	if !e.Enabled || !e.FailingSince.IsZero() || e.DisabledReason != "" {
		t.Fatalf("Enable left %+v", e)
	}
}

func TestWebhookSnippet(t *testing.T) {
	long := strings.Repeat("é", 600) // 1200 bytes
	if got := domain.WebhookSnippet([]byte(long)); len(got) > domain.MaxWebhookResponseSnippet || !strings.HasPrefix(long, got) {
		t.Fatalf("snippet of %d bytes, not a prefix of whole characters", len(got))
	}
	if got := domain.WebhookSnippet([]byte("ok\x00\x1b[31m\u202e\n")); got != "ok  [31m \n" {
		t.Fatalf("snippet = %q", got)
	}
}
