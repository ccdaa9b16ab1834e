package match

import "github.com/hubctl/hubctl/internal/routing"

// Ordering modes of a subscription (docs/concepts.md, Ordered delivery).
const (
	OrderingNone    = routing.OrderingNone
	OrderingTenant  = routing.OrderingTenant
	OrderingSubject = routing.OrderingSubject
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
