package pg

// Delivery job states and dead-letter reasons (migration 1; docs/concepts.md, Dead letters and poison).
const (
	JobPending   = "pending"
	JobInFlight  = "in_flight"
	JobSucceeded = "succeeded"
	JobDead      = "dead"
	JobCanceled  = "canceled"

	DeadExhausted            = "exhausted"
	DeadPoison               = "poison"
	DeadSubscriptionDisabled = "subscription_disabled"
	// DeadFilterError is an event the subscription's content filter failed
	// on, kept instead of dropped (migration 14).
	DeadFilterError = "filter_error"
)

// ShedRateLimited is the shed_reason of a pending job holding the slot its
// subscription's rate limiter gave it (at its next_attempt_at): its next
// claim takes no new slot. The claim statement writes it as a literal.
const ShedRateLimited = "rate_limited"
