// Package queue holds the statements of a delivery's way through the hub:
// the ingest write (events, jobs, pull entries, quarantine, stored offsets),
// claims, completions, leases, parked ordering keys, first attempts handed
// over, recovery of past events, pull reads and the jobs channel. It is the
// hot path; docs/architecture.md, "The store by concern", says why each
// statement lives here.
package queue

import "github.com/jackc/pgx/v5/pgxpool"

// Store runs the queue statements over the shared pool.
type Store struct {
	Pool *pgxpool.Pool
}

// New returns the queue statements over pool.
func New(pool *pgxpool.Pool) *Store { return &Store{Pool: pool} }
