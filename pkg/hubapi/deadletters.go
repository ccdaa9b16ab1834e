package hubapi

import "time"

// Reasons a delivery is dead (docs/concepts.md, Dead letters and poison; docs/concepts.md, Auto-disable).
const (
	DeadExhausted            = "exhausted"
	DeadPoison               = "poison"
	DeadSubscriptionDisabled = "subscription_disabled"
)

// DeadReasons lists every dead-letter reason, for validation and help texts.
var DeadReasons = []string{DeadExhausted, DeadPoison, DeadSubscriptionDisabled}

// DeadLetter is an item of GET /v1/dead-letters: a delivery that stopped
// trying, which POST /v1/dead-letters/replay sends on its way again.
type DeadLetter struct {
	ID             string `json:"id"`
	SubscriptionID string `json:"subscription_id"`
	// EventID and EventType are "" in the rare case the inbox no longer
	// holds the event.
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	// Reason is one of DeadReasons.
	Reason     string    `json:"reason"`
	Attempts   int       `json:"attempts"`
	LastError  *string   `json:"last_error"`
	LastStatus *int      `json:"last_status"`
	DeadAt     time.Time `json:"dead_at"`
}

// DeadLetterReplay is the body of POST /v1/dead-letters/replay. Every
// field narrows the selection; none selects every dead letter of the
// tenant. Since (inclusive) and Until (exclusive) bound dead_at, in RFC 3339.
type DeadLetterReplay struct {
	IDs            []string `json:"ids,omitempty"`
	SubscriptionID string   `json:"subscription_id,omitempty"`
	Reason         string   `json:"reason,omitempty"`
	Since          string   `json:"since,omitempty"`
	Until          string   `json:"until,omitempty"`
	// DryRun counts the selection and changes nothing.
	DryRun bool `json:"dry_run,omitempty"`
}

// DeadLetterReplayResult answers a replay: Matched dead letters were
// selected and Replayed of them went back to pending with a fresh attempt
// budget (0 on a dry run; fewer than Matched when a concurrent replay took
// some first).
type DeadLetterReplayResult struct {
	Matched  int64 `json:"matched"`
	Replayed int64 `json:"replayed"`
	DryRun   bool  `json:"dry_run"`
}
