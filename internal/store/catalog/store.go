// Package catalog holds the statements of what tenants and operators manage
// and read: tenants and the roster, API keys, subscriptions and their sealed
// secrets, rate-limit rows, Idempotency-Key rows, dead letters, deliveries,
// the inbox and the quarantine.
package catalog

import "github.com/jackc/pgx/v5/pgxpool"

// Store runs the catalog statements over the shared pool.
type Store struct {
	Pool *pgxpool.Pool
}

// New returns the catalog statements over pool.
func New(pool *pgxpool.Pool) *Store { return &Store{Pool: pool} }
