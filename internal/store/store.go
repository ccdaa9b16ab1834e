// Package store opens the database for a whole hub: one pool, and the
// statements of each concern over it (queue, catalog, lifecycle, oncall;
// the layer they share is package pg).
package store

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/lifecycle"
	"github.com/hubctl/hubctl/internal/store/oncall"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/store/queue"
)

// Store is the handle a process opens on the database: one pool, and the
// statements of each concern over it. Only what assembles a whole hub (the
// hub, the CLI's direct mode, hubctl dev) holds it; each component it builds
// takes the concerns it uses.
type Store struct {
	Pool      *pgxpool.Pool
	Queue     *queue.Store
	Catalog   *catalog.Store
	Lifecycle *lifecycle.Store
	OnCall    *oncall.Store
}

// Open connects a pool and checks that the server answers.
func Open(ctx context.Context, dsn string, opts pg.Options) (*Store, error) {
	pool, err := pg.Open(ctx, dsn, opts)
	if err != nil {
		return nil, err
	}
	return New(pool), nil
}

// New returns the handle over an open pool.
func New(pool *pgxpool.Pool) *Store {
	return &Store{Pool: pool, OnCall: oncall.New(pool), Queue: queue.New(pool), Catalog: catalog.New(pool), Lifecycle: lifecycle.New(pool)}
}

// Close releases every connection.
func (s *Store) Close() { s.Pool.Close() }

// Ping reports whether the database answers; readiness probes use it.
func (s *Store) Ping(ctx context.Context) error {
	return pg.Classify(s.Pool.Ping(ctx))
}
