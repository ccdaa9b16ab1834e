// Package oncall holds what operators read about a running hub: backlog by
// tenant, instances and their heartbeats, stored breaker states, blocked
// ordering keys and auto-disabled subscriptions (docs/operating.md).
package oncall

import "github.com/jackc/pgx/v5/pgxpool"

// Store runs the on-call statements over the shared pool.
type Store struct {
	Pool *pgxpool.Pool
}

// New returns the on-call statements over pool.
func New(pool *pgxpool.Pool) *Store { return &Store{Pool: pool} }
