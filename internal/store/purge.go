package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// PurgeCount is how many rows of one table a tenant purge removed.
type PurgeCount struct {
	Table string
	Rows  int64
}

// purgeSteps delete one tenant's rows, $1 its id, in an order that leaves
// no row pointing at a removed one. Quarantined records carry no tenant
// column: a record is the tenant's when one of its headers is the
// tenantid attribute (either prefix, any case) with the tenant's id.
var purgeSteps = []struct{ table, sql string }{
	{"delivery_attempts", `DELETE FROM delivery_attempts WHERE job_id IN (SELECT id FROM delivery_jobs WHERE tenant_id = $1)`},
	{"delivery_jobs", `DELETE FROM delivery_jobs WHERE tenant_id = $1`},
	{"pull_entries", `DELETE FROM pull_entries WHERE subscription_id IN (SELECT id FROM subscriptions WHERE tenant_id = $1)`},
	{"pull_cursors", `DELETE FROM pull_cursors WHERE subscription_id IN (SELECT id FROM subscriptions WHERE tenant_id = $1)`},
	{"events", `DELETE FROM events WHERE tenant_id = $1`},
	{"event_ids", `DELETE FROM event_ids WHERE tenant_id = $1`},
	{"quarantine", `DELETE FROM quarantine q WHERE EXISTS (
		SELECT 1 FROM unnest(q.header_keys, q.header_values) AS h (k, v)
		WHERE lower(encode(h.k, 'escape')) IN ('ce-tenantid', 'ce_tenantid') AND h.v = convert_to($1, 'UTF8'))`},
	{"subscriptions", `DELETE FROM subscriptions WHERE tenant_id = $1`},
	{"tenant_api_keys", `DELETE FROM tenant_api_keys WHERE tenant_id = $1`},
	{"tenants", `DELETE FROM tenants WHERE id = $1`},
}

// PurgeTenant removes every stored row of one tenant, the tenant itself
// last, in ONE transaction, and counts what went per table. Nothing of
// another tenant is touched. A tenant that does not exist is an ErrNotFound.
//
// The transaction holds the ingest lock, so no batch stores the tenant's
// events while it runs; once the tenant row is gone ingest discards its
// events as unknown_tenant (within the roster refresh on every instance).
func (s *Store) PurgeTenant(ctx context.Context, id string) ([]PurgeCount, error) {
	var counts []PurgeCount
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		counts = counts[:0]
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tenants WHERE id = $1 FOR UPDATE)`, id).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return tenantNotFound(id)
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, ingestLockKey); err != nil {
			return err
		}
		for _, step := range purgeSteps {
			tag, err := tx.Exec(ctx, step.sql, id)
			if err != nil {
				return fmt.Errorf("purge %s: %w", step.table, err)
			}
			counts = append(counts, PurgeCount{Table: step.table, Rows: tag.RowsAffected()})
		}
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if err != nil {
		return nil, classify(fmt.Errorf("purge tenant %q: %w", id, err))
	}
	return counts, nil
}
