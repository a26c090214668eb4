package bootstrap

import (
	"testing"
	"time"
)

// Ensure a default written from the application's constant reads as the
// operator would write it, and the webhook section's defaults are the
// application's own.
func TestDurationText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		120 * time.Hour:                   "120h",
		24 * time.Hour:                    "24h",
		5 * time.Minute:                   "5m",
		15 * time.Second:                  "15s",
		100 * time.Millisecond:            "100ms",
		2*time.Hour + 30*time.Minute:      "2h30m",
		time.Hour + time.Second:           "1h0m1s",
		90*time.Second + time.Millisecond: "1m30.001s",
	} {
		if got := durationText(d); got != want {
			t.Errorf("durationText(%v) = %q, want %q", d, got, want)
		}
	}
	for s, want := range map[*setting]string{
		settingWebhookSchedule:      "5s,5m,30m,2h,5h,10h,14h,20h,24h",
		settingWebhookDisableAfter:  "120h",
		settingWebhookSecretOverlap: "24h",
		settingWebhookTimeout:       "15s",
		settingWebhookRetention:     "720h",
	} {
		if s.def != want {
			t.Errorf("%s defaults to %q, want %q", s.env, s.def, want)
		}
	}
}
