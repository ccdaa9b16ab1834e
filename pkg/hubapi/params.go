package hubapi

// Page bounds of every listing (docs/api.md).
const (
	DefaultPageLimit = 100
	MaxPageLimit     = 1000
)

// ListParams page through a listing. A zero Limit means DefaultPageLimit;
// an empty Cursor starts at the beginning, and a page's NextCursor
// continues it.
type ListParams struct {
	Limit  int
	Cursor string
}

// QuarantineListParams select a page of the quarantine, newest first.
// Reason and Topic, when set, keep only records with exactly that reason
// code or topic.
type QuarantineListParams struct {
	ListParams
	Reason string
	Topic  string
}

// DeliveryListParams select a page of one subscription's deliveries, newest
// first. State, when set, keeps only deliveries in that state (one of
// DeliveryStates); Since (inclusive) and Until (exclusive), RFC 3339, bound
// when the delivery was created.
type DeliveryListParams struct {
	ListParams
	State        string
	Since, Until string
}

// DeadLetterFilter narrows the dead letters of a tenant (docs/concepts.md,
// Dead letters and poison): a subscription id, a reason (one of
// DeadReasons) and an RFC 3339 window on dead_at, Since inclusive and
// Until exclusive. Empty fields select everything.
type DeadLetterFilter struct {
	SubscriptionID string
	Reason         string
	Since, Until   string
}

// DeadLetterListParams select a page of dead letters, most recently dead
// first.
type DeadLetterListParams struct {
	ListParams
	DeadLetterFilter
}

// EventFilter narrows a tenant's inbox: exact event key, source and
// subject, and an RFC 3339 window on when the hub received the event
// (Since inclusive, Until exclusive). Empty fields select everything.
type EventFilter struct {
	Type, Source, Subject string
	Since, Until          string
}

// EventListParams select a page of the inbox, newest first.
type EventListParams struct {
	ListParams
	EventFilter
}

// PullParams select one read of a pull subscription (docs/consuming.md,
// Pulling events). A zero Limit means DefaultPageLimit. After, when set,
// reads the events after that seq instead of after the subscription's
// cursor.
type PullParams struct {
	Limit int
	After *int64
}
