package hubapi

import "time"

// Delivery states (the job states of docs/concepts.md, Dispatch, and docs/architecture.md).
const (
	DeliveryPending   = "pending"
	DeliveryInFlight  = "in_flight"
	DeliverySucceeded = "succeeded"
	DeliveryDead      = "dead"
	DeliveryCanceled  = "canceled"
)

// DeliveryStates lists every state, in the order a delivery moves through
// them, for validation and help texts.
var DeliveryStates = []string{DeliveryPending, DeliveryInFlight, DeliverySucceeded, DeliveryDead, DeliveryCanceled}

// Delivery is one event on its way to one subscription: an item of
// GET /v1/subscriptions/{id}/deliveries. Fields that do not apply in the
// delivery's state are null.
type Delivery struct {
	ID             string `json:"id"`
	SubscriptionID string `json:"subscription_id"`
	// EventID is the CloudEvents id (X-Lerian-Event-Id) and EventType the
	// event key (X-Lerian-Event-Type); both "" in the rare case the inbox
	// no longer holds the event, which makes the delivery dead (poison).
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	TenantID  string `json:"tenant_id"`
	State     string `json:"state"`
	// Attempts is how much of the retry budget the delivery has spent; a
	// replay grants a fresh budget, while the attempt history keeps every
	// attempt ever made.
	Attempts int `json:"attempts"`
	// NextAttemptAt is when a pending delivery is due.
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	// DeadReason is exhausted, poison or subscription_disabled while dead.
	DeadReason  *string    `json:"dead_reason"`
	LastError   *string    `json:"last_error"`
	LastStatus  *int       `json:"last_status"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	SucceededAt *time.Time `json:"succeeded_at"`
	DeadAt      *time.Time `json:"dead_at"`
	// HeldReason says why a pending delivery waits without an attempt
	// being spent: breaker_open (its destination's circuit breaker is
	// open; it is tried again at next_attempt_at) or rate_limited (its
	// subscription's rate_limit gave it the slot at next_attempt_at).
	// Null otherwise.
	HeldReason *string `json:"held_reason"`
}

// HeldBreakerOpen is the held_reason of a delivery shed by its
// destination's open circuit breaker.
const HeldBreakerOpen = "breaker_open"

// HeldRateLimited is the held_reason of a delivery waiting for the slot
// its subscription's rate_limit gave it.
const HeldRateLimited = "rate_limited"

// DeliveryDetail is GET /v1/deliveries/{id}: the delivery with every
// recorded attempt, oldest first.
type DeliveryDetail struct {
	Delivery
	AttemptHistory []DeliveryAttempt `json:"attempt_history"`
}

// Attempt outcomes.
const (
	AttemptSucceeded = "succeeded"
	AttemptFailed    = "failed"
)

// DeliveryAttempt is one call to the destination.
type DeliveryAttempt struct {
	// ID is the X-Lerian-Delivery-Id the destination received, new for
	// every attempt.
	ID string `json:"id"`
	// Attempt numbers the delivery's attempts from 1; it keeps counting
	// across replays.
	Attempt    int       `json:"attempt"`
	StartedAt  time.Time `json:"started_at"`
	DurationMS int64     `json:"duration_ms"`
	Outcome    string    `json:"outcome"`
	// StatusCode is the destination's status, null when it gave none (a
	// timeout, a refused connection, a sink without statuses).
	StatusCode *int    `json:"status_code"`
	Error      *string `json:"error"`
	// Response is the start of the destination's answer (at most 1 KiB),
	// null when it sent none: text when it is valid UTF-8, else base64
	// with ResponseEncoding "base64".
	Response         *string `json:"response"`
	ResponseEncoding string  `json:"response_encoding,omitempty"`
}

// DeliveryCountsWindow is how far back DeliveryCounts look.
const DeliveryCountsWindow = 24 * time.Hour

// DeliveryCountsSample bounds the deliveries counted per subscription: its
// latest ones, as many as the largest page of its deliveries, so a busy
// subscription costs what a quiet one does.
const DeliveryCountsSample = MaxPageLimit

// MaxDeliveryCountsSubscriptions is the most subscriptions one
// DeliveryCounts names: the default page of the subscription list.
const MaxDeliveryCountsSubscriptions = DefaultPageLimit

// DeliveryCounts is GET /v1/delivery-counts: for each subscription asked
// for, in the order asked, its deliveries created at or after Since (24 h
// before the answer) by where they stand now.
type DeliveryCounts struct {
	Since time.Time                    `json:"since"`
	Items []SubscriptionDeliveryCounts `json:"items"`
}

// SubscriptionDeliveryCounts are one subscription's recent deliveries.
type SubscriptionDeliveryCounts struct {
	SubscriptionID string `json:"subscription_id"`
	Delivered      int64  `json:"delivered"`
	// Failed are still being tried after at least one failed attempt.
	Failed int64 `json:"failed"`
	Dead   int64 `json:"dead"`
	// Sampled says only the latest DeliveryCountsSample deliveries were
	// counted and all of them are recent: the window holds more.
	Sampled bool `json:"sampled"`
}

// LatencyHours is how many hours AttemptLatency covers, an hour each.
const LatencyHours = 24

// AttemptLatency is GET /v1/subscriptions/{id}/latency: how long the
// subscription's attempts took, per hour of the last LatencyHours, oldest
// hour first, the current hour last. It reads the attempts of the
// subscription's latest DeliveryCountsSample deliveries.
type AttemptLatency struct {
	// Since is the start of the first hour.
	Since time.Time     `json:"since"`
	Hours []LatencyHour `json:"hours"`
	// Sampled says every delivery read is recent: the hours hold attempts
	// of older deliveries that were not read.
	Sampled bool `json:"sampled"`
}

// LatencyHour is one hour's attempts: how many, and the median and 95th
// percentile of their durations in milliseconds (null without attempts).
type LatencyHour struct {
	Start    time.Time `json:"start"`
	Attempts int64     `json:"attempts"`
	P50MS    *int64    `json:"p50_ms"`
	P95MS    *int64    `json:"p95_ms"`
}
