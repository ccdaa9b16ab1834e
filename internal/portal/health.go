package portal

import (
	"time"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Health is a subscription's state at a glance: a word, a tone the page
// colours it by, and the sentence that says what to do.
type Health struct {
	Label string
	// Tone is ok, warn or bad.
	Tone   string
	Advice string
}

// HealthOf reads a subscription's health from what the hub says of it,
// worst first: switched off, failing verification, breaker open, failing,
// healthy.
func HealthOf(s hubapi.Subscription) Health {
	switch {
	case !s.Enabled && s.DisabledReason != nil && *s.DisabledReason != "":
		return Health{"Disabled: " + *s.DisabledReason, "bad",
			"Deliveries are paused. Fix the destination, then Verify and re-enable."}
	case !s.Enabled:
		return Health{"Disabled", "warn", "Deliveries are paused until you enable it."}
	case s.VerificationState == "failed":
		return Health{"Verification failed", "bad",
			"The destination did not answer the verification probe. Fix it, then Verify again."}
	case s.VerificationState == "pending":
		return Health{"Verifying", "warn", "The hub is still probing the destination."}
	case s.Breaker != nil && s.Breaker.State != "closed":
		return Health{"Breaker " + s.Breaker.State, "bad",
			"The destination kept failing; deliveries wait until it answers again."}
	case s.FailingSince != nil:
		return Health{"Failing since " + s.FailingSince.UTC().Format(time.DateTime) + " UTC", "warn",
			"Recent deliveries failed. Open a failed delivery to read what the destination answered."}
	}
	return Health{"Healthy", "ok", ""}
}
