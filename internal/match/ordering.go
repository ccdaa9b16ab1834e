package match

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

// Orderings lists the valid ordering modes, the default first.
var Orderings = []string{OrderingNone, OrderingTenant, OrderingSubject}

// ValidOrdering reports whether mode is one of Orderings.
func ValidOrdering(mode string) bool {
	for _, m := range Orderings {
		if m == mode {
			return true
		}
	}
	return false
}

// OrderingKey is the key a job of a subscription with ordering mode is
// ordered by, and false when the mode orders nothing. An event without a
// subject has the empty subject as its key: such events of a subscription
// ordered by subject are ordered among themselves.
func OrderingKey(mode, tenantID, subject string) (string, bool) {
	switch mode {
	case OrderingTenant:
		return tenantID, true
	case OrderingSubject:
		return subject, true
	default:
		return "", false
	}
}
