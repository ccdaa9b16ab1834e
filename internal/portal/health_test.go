package portal

import (
	"testing"
	"time"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestHealthOf(t *testing.T) {
	reason := "auto_disabled"
	since := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	healthy := hubapi.Subscription{Enabled: true, VerificationState: "active"}
	with := func(change func(*hubapi.Subscription)) hubapi.Subscription {
		s := healthy
		change(&s)
		return s
	}
	for _, tc := range []struct {
		sub   hubapi.Subscription
		label string
		tone  string
	}{
		{healthy, "Healthy", "ok"},
		{with(func(s *hubapi.Subscription) { s.Enabled = false }), "Disabled", "warn"},
		{with(func(s *hubapi.Subscription) { s.Enabled, s.DisabledReason = false, &reason }), "Disabled: auto_disabled", "bad"},
		{with(func(s *hubapi.Subscription) { s.VerificationState = "failed" }), "Verification failed", "bad"},
		{with(func(s *hubapi.Subscription) { s.VerificationState = "pending" }), "Verifying", "warn"},
		{with(func(s *hubapi.Subscription) { s.Breaker = &hubapi.Breaker{State: "open"} }), "Breaker open", "bad"},
		{with(func(s *hubapi.Subscription) { s.Breaker = &hubapi.Breaker{State: "closed"} }), "Healthy", "ok"},
		{with(func(s *hubapi.Subscription) { s.FailingSince = &since }), "Failing since 2026-03-01 12:00:00 UTC", "warn"},
		// Switched off outranks every other trouble.
		{with(func(s *hubapi.Subscription) { s.Enabled, s.DisabledReason, s.FailingSince = false, &reason, &since }), "Disabled: auto_disabled", "bad"},
	} {
		if got := HealthOf(tc.sub); got.Label != tc.label || got.Tone != tc.tone {
			t.Errorf("%+v: %q/%s, want %q/%s", tc.sub, got.Label, got.Tone, tc.label, tc.tone)
		}
	}
}
