// Package routing is the vocabulary of routing new events to
// subscriptions, shared by the store, which loads the candidates and
// writes the routes, and by internal/match, which decides them: the store
// stays storage, and the decision is passed in as a Router.
package routing

import "github.com/hubctl/hubctl/internal/filter"

// Verification states of a subscription (docs/concepts.md, Verification).
const (
	VerificationPending = "pending"
	VerificationActive  = "active"
	VerificationFailed  = "failed"
)

// Ordering modes of a subscription (docs/concepts.md, Ordered delivery).
const (
	// OrderingNone delivers as dispatch finds the jobs: several of one
	// subscription may be in flight at once.
	OrderingNone = "none"
	// OrderingTenant keeps every delivery of the subscription in seq
	// order, one at a time.
	OrderingTenant = "tenant"
	// OrderingSubject keeps the deliveries of each event subject in seq
	// order, one at a time per subject; subjects progress independently.
	OrderingSubject = "subject"
)

// Subscription is what matching needs to know about one subscription.
type Subscription struct {
	TenantID          string
	Enabled           bool
	VerificationState string
	EventTypes        []string // patterns: exact key, "<resourcetype>.*" or "*"
	SchemaMajor       int
	Origin            string // empty matches every source
}

// Event is what matching needs to know about one accepted event.
type Event struct {
	TenantID    string
	Key         string // <resourcetype>.<eventtype>
	SchemaMajor int
	Source      string
}

// Candidate is one subscription a batch of new events may be routed to, as
// the store loaded it for the batch's tenants.
type Candidate struct {
	ID   [16]byte // the subscription's id; opaque here
	Pull bool     // a pull sink: matched events get a pull entry, not a delivery job
	Subscription
	// Filter is the subscription's compiled content filter, nil when it
	// has none. FilterErr is set instead when its stored expression does
	// not compile: every event is then an evaluation error, no match.
	Filter    *filter.Program
	FilterErr error
	// Ordering is the subscription's ordering mode (match.OrderingNone, "" or
	// another of match.Orderings).
	Ordering string
}

// NewEvent is an event the inbox has just taken, with the seq it got.
type NewEvent struct {
	Seq int64
	Event
	// Attributes is what content filters read of the event.
	Attributes filter.Event
}

// Route sends one new event to one subscription.
type Route struct {
	SubscriptionID [16]byte
	TenantID       string
	Seq            int64
	// OrderingKey is the job's ordering key, nil when its subscription
	// orders nothing (match.OrderingKey).
	OrderingKey *string
}

// Routes is what a Router decided, each list in the order of the events
// and, per event, of its tenant's candidates.
type Routes struct {
	Jobs []Route // to push sinks: one delivery job each
	Pull []Route // to pull sinks: one pull entry each
	// FilterFailures are the (event, subscription) pairs whose content
	// filter could not say yes or no: the event is kept for the
	// subscription as a dead letter (docs/concepts.md, Dead letters and poison).
	FilterFailures []FilterFailure
}

// FilterFailure is one filter that failed on one event.
type FilterFailure struct {
	Route
	Pull   bool   // the subscription is a pull sink, which has no dead letters
	Reason string // one of filter.Reasons
	Error  string // what failed, for the dead letter's last_error
}

// Router decides, for each new event (in seq order), which of its tenant's
// candidates (keyed by tenant) want it; match.Router, under the caller's
// filter limits, is the one the hub runs.
type Router func(events []NewEvent, candidates map[string][]Candidate) Routes
