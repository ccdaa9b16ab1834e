package hubapi

// SubscriptionRecover is the body of POST /v1/subscriptions/{id}/recover
// (docs/api.md, Recover): the events received in [Since, Until), RFC 3339.
// Since is required; Until defaults to now.
type SubscriptionRecover struct {
	Since string `json:"since"`
	Until string `json:"until,omitempty"`
	// DryRun counts and queues nothing.
	DryRun bool `json:"dry_run,omitempty"`
}

// SubscriptionRecoverResult answers a recover: Matched events of the range
// match the subscription now and have no succeeded delivery for it;
// Queued of them got a pending job (0 on a dry run, and for events whose
// job is pending or in flight already).
type SubscriptionRecoverResult struct {
	Matched int64 `json:"matched"`
	Queued  int64 `json:"queued"`
	DryRun  bool  `json:"dry_run"`
}

// CodeSubscriptionDisabled refuses recovering a disabled subscription
// other than on a dry run: its jobs would go straight to the dead letters.
const CodeSubscriptionDisabled = "subscription_disabled"
