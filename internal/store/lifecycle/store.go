// Package lifecycle holds the statements that keep storage bounded: daily
// partitions and the move of the inbox sequence, retention, purging a
// tenant, and the storage status operators read.
package lifecycle

import "github.com/jackc/pgx/v5/pgxpool"

// Store runs the lifecycle statements over the shared pool.
type Store struct {
	Pool *pgxpool.Pool
}

// New returns the lifecycle statements over pool.
func New(pool *pgxpool.Pool) *Store { return &Store{Pool: pool} }
