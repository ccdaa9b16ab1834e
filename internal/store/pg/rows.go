package pg

import (
	"fmt"

	"github.com/google/uuid"
)

// PullSinkType is the sink type whose subscriptions read from a cursor
// instead of receiving jobs (docs/consuming.md, Pulling events); the schema's CHECK lists it.
const PullSinkType = "pull"

// ValueInfo describes a quarantined record's value as the producer sent it:
// ingest writes it, quarantine reads show it.
type ValueInfo struct {
	Size      int64
	SHA256    []byte
	Truncated bool // only the first bytes are stored
}

// TenantNotFound is the ErrNotFound of tenant id, for every concern that
// looks a tenant up.
func TenantNotFound(id string) error {
	return fmt.Errorf("%w: tenant %q", ErrNotFound, id)
}

// SubscriptionNotFound is the ErrNotFound of subscription id, for every
// concern that looks a subscription up.
func SubscriptionNotFound(id uuid.UUID) error {
	return fmt.Errorf("%w: subscription %s", ErrNotFound, id)
}
