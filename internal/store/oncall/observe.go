package oncall

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// TenantBacklog is one tenant's delivery backlog.
type TenantBacklog struct {
	TenantID string
	// Pending counts jobs waiting for an attempt (due or scheduled) and
	// in flight.
	Pending int64
	// Due counts the pending jobs whose next attempt is due.
	Due int64
	// OldestDue is the next_attempt_at of the job that has been due the
	// longest; zero when none is due.
	OldestDue time.Time
}

// BacklogByTenant reads the delivery backlog of every tenant with jobs not
// yet settled, largest first.
func (s *Store) BacklogByTenant(ctx context.Context, now time.Time) ([]TenantBacklog, error) {
	rows, err := s.Pool.Query(ctx, backlogByTenant, pgx.NamedArgs{"now": now})
	if err != nil {
		return nil, pg.Classify(fmt.Errorf("read the backlog by tenant: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (TenantBacklog, error) {
		var b TenantBacklog
		var oldest *time.Time
		err := row.Scan(&b.TenantID, &b.Pending, &b.Due, &oldest)
		b.OldestDue = pg.ValueOrZero(oldest)
		return b, err
	})
	if err != nil {
		return nil, pg.Classify(fmt.Errorf("read the backlog by tenant: %w", err))
	}
	return out, nil
}

// backlogByTenant reads the partial indexes of pending and of in-flight
// jobs, never settled history: one branch per state, each matching its
// index's predicate. (As one scan with state IN (...) no partial index
// applies, and the planner read every partition whole.)
//
//go:embed sql/backlog_by_tenant.sql
var backlogByTenant string

// AutoDisabledSubscriptions counts the live subscriptions the hub switched
// off after a sustained failure span.
func (s *Store) AutoDisabledSubscriptions(ctx context.Context) (int64, error) {
	var n int64
	err := s.Pool.QueryRow(ctx, autoDisabledSubscriptionsSQL).Scan(&n)
	if err != nil {
		return 0, pg.Classify(fmt.Errorf("count auto-disabled subscriptions: %w", err))
	}
	return n, nil
}

// Instance is one running hub as its heartbeat describes it.
type Instance struct {
	Owner       string
	Role        string
	Version     string
	StartedAt   time.Time
	HeartbeatAt time.Time
	// Stats is the instance's own snapshot, as JSON.
	Stats json.RawMessage
}

// BreakerState is a circuit breaker a process holds open or half-open.
type BreakerState struct {
	Owner       string
	TenantID    string
	Destination string
	State       string // open, half_open
	OpenUntil   time.Time
}

// Heartbeat records that an instance is alive with its stats, replaces its
// breaker rows with breakers, and forgets instances whose heartbeat is
// older than staleAfter (their breaker rows go with them), all in one
// transaction.
func (s *Store) Heartbeat(ctx context.Context, in Instance, breakers []BreakerState, staleAfter time.Duration) error {
	return pg.Classify(pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, upsertInstanceSQL,
			pgx.NamedArgs{
				"owner": in.Owner, "role": in.Role, "version": in.Version,
				"started": in.StartedAt, "beat": in.HeartbeatAt, "stats": statsJSON(in.Stats),
			}); err != nil {
			return fmt.Errorf("record the heartbeat: %w", err)
		}
		tenants, dests, states, until := make([]string, len(breakers)), make([]string, len(breakers)), make([]string, len(breakers)), make([]time.Time, len(breakers))
		for i, b := range breakers {
			tenants[i], dests[i], states[i], until[i] = b.TenantID, b.Destination, b.State, b.OpenUntil
		}
		// Two statements: in one, the insert would not see the delete and
		// conflict with the rows it replaces.
		if _, err := tx.Exec(ctx, deleteOwnBreakersSQL, pgx.StrictNamedArgs{"owner": in.Owner}); err != nil {
			return fmt.Errorf("record the breakers: %w", err)
		}
		// A breaker of a destination no subscription delivers to any more
		// is not written back: the process forgets it at its next
		// maintenance, which may come after this heartbeat.
		if _, err := tx.Exec(ctx, insertBreakersInUseSQL,
			pgx.NamedArgs{"owner": in.Owner, "tenants": tenants, "dests": dests, "states": states, "until": until}); err != nil {
			return fmt.Errorf("record the breakers: %w", err)
		}
		if _, err := tx.Exec(ctx, deleteStaleInstancesSQL,
			pgx.NamedArgs{"cutoff": in.HeartbeatAt.Add(-staleAfter), "owner": in.Owner}); err != nil {
			return fmt.Errorf("forget stopped instances: %w", err)
		}
		return nil
	}))
}

// Destination is one tenant's destination: what a circuit breaker is kept
// for (docs/concepts.md, Circuit breaker).
type Destination struct {
	TenantID    string
	Destination string
}

// UnusedDestinations returns those of dests that no enabled, live
// subscription delivers to any more: their breakers are to be forgotten.
func (s *Store) UnusedDestinations(ctx context.Context, dests []Destination) ([]Destination, error) {
	if len(dests) == 0 {
		return nil, nil
	}
	tenants, names := make([]string, len(dests)), make([]string, len(dests))
	for i, d := range dests {
		tenants[i], names[i] = d.TenantID, d.Destination
	}
	rows, err := s.Pool.Query(ctx, unusedDestinationsSQL,
		pgx.NamedArgs{"tenants": tenants, "dests": names})
	if err != nil {
		return nil, pg.Classify(fmt.Errorf("find unused destinations: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Destination, error) {
		var d Destination
		err := row.Scan(&d.TenantID, &d.Destination)
		return d, err
	})
	if err != nil {
		return nil, pg.Classify(fmt.Errorf("find unused destinations: %w", err))
	}
	return out, nil
}

// Leave removes an instance that is stopping, with its breaker rows.
func (s *Store) Leave(ctx context.Context, owner string) error {
	if _, err := s.Pool.Exec(ctx, leaveSQL, pgx.StrictNamedArgs{"owner": owner}); err != nil {
		return pg.Classify(fmt.Errorf("remove the instance: %w", err))
	}
	return nil
}

func statsJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	return string(raw)
}

// Instances reads the instances whose heartbeat is at most staleAfter old.
func (s *Store) Instances(ctx context.Context, now time.Time, staleAfter time.Duration) ([]Instance, error) {
	rows, err := s.Pool.Query(ctx, instancesSQL, pgx.NamedArgs{"cutoff": now.Add(-staleAfter)})
	if err != nil {
		return nil, pg.Classify(fmt.Errorf("read the instances: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Instance, error) {
		var in Instance
		var stats []byte
		err := row.Scan(&in.Owner, &in.Role, &in.Version, &in.StartedAt, &in.HeartbeatAt, &stats)
		in.Stats = stats
		return in, err
	})
	if err != nil {
		return nil, pg.Classify(fmt.Errorf("read the instances: %w", err))
	}
	return out, nil
}

// BreakerStates reads the breakers live instances hold open or half-open:
// of one tenant's destination when both are given, else all of them.
func (s *Store) BreakerStates(ctx context.Context, tenantID, destination string, now time.Time, staleAfter time.Duration) ([]BreakerState, error) {
	rows, err := s.Pool.Query(ctx, breakerStatesSQL,
		pgx.NamedArgs{"cutoff": now.Add(-staleAfter), "tenant": tenantID, "destination": destination})
	if err != nil {
		return nil, pg.Classify(fmt.Errorf("read the breakers: %w", err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (BreakerState, error) {
		var b BreakerState
		err := row.Scan(&b.Owner, &b.TenantID, &b.Destination, &b.State, &b.OpenUntil)
		return b, err
	})
	if err != nil {
		return nil, pg.Classify(fmt.Errorf("read the breakers: %w", err))
	}
	return out, nil
}

// OrderingBlockedKeys counts the ordering keys held by a failed delivery:
// keys of ordered subscriptions whose job has failed at least once and
// waits for its retry, so the key's later jobs wait too (head-of-line
// blocking, docs/concepts.md, Ordered delivery). A parked job waits for its
// key, not for a retry of its own, and is not counted. It reads the
// partial index of live keyed jobs only: nothing when no subscription
// orders.
func (s *Store) OrderingBlockedKeys(ctx context.Context) (int64, error) {
	var n int64
	err := s.Pool.QueryRow(ctx, orderingBlockedKeysSQL).Scan(&n)
	if err != nil {
		return 0, pg.Classify(fmt.Errorf("count blocked ordering keys: %w", err))
	}
	return n, nil
}

//go:embed sql/auto_disabled_subscriptions.sql
var autoDisabledSubscriptionsSQL string

//go:embed sql/upsert_instance.sql
var upsertInstanceSQL string

//go:embed sql/delete_own_breakers.sql
var deleteOwnBreakersSQL string

//go:embed sql/insert_breakers_in_use.sql
var insertBreakersInUseSQL string

//go:embed sql/delete_stale_instances.sql
var deleteStaleInstancesSQL string

//go:embed sql/unused_destinations.sql
var unusedDestinationsSQL string

//go:embed sql/leave.sql
var leaveSQL string

//go:embed sql/instances.sql
var instancesSQL string

//go:embed sql/breaker_states.sql
var breakerStatesSQL string

//go:embed sql/ordering_blocked_keys.sql
var orderingBlockedKeysSQL string
