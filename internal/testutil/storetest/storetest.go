// Package storetest opens, for a test, the statements of every store
// concern over one fresh migrated database, for tests that set up with one
// concern what they check with another.
package storetest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hubctl/hubctl/internal/store"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/lifecycle"
	"github.com/hubctl/hubctl/internal/store/oncall"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

// The concerns, named so that each embeds under a field of its own.
type (
	Queue     = queue.Store
	Catalog   = catalog.Store
	Lifecycle = lifecycle.Store
)

// Store is every concern's statements over one pool.
type Store struct {
	Pool   *pgxpool.Pool
	OnCall *oncall.Store
	*Queue
	*Catalog
	*Lifecycle
}

// New returns every concern's statements over pool.
func New(pool *pgxpool.Pool) *Store {
	return &Store{Pool: pool, OnCall: oncall.New(pool), Queue: queue.New(pool), Catalog: catalog.New(pool), Lifecycle: lifecycle.New(pool)}
}

// Connect returns the statements over the database at dsn, which the
// caller closes.
func Connect(ctx context.Context, dsn string, opts pg.Options) (*Store, error) {
	pool, err := pg.Open(ctx, dsn, opts)
	if err != nil {
		return nil, err
	}
	return New(pool), nil
}

// Close releases every connection.
func (s *Store) Close() { s.Pool.Close() }

// Whole is the store as a hub that assembles every component holds it.
func (s *Store) Whole() *store.Store {
	return &store.Store{Pool: s.Pool, Queue: s.Queue, Catalog: s.Catalog, Lifecycle: s.Lifecycle, OnCall: s.OnCall}
}

// Open returns the statements over a fresh migrated database, closed when
// the test ends.
func Open(t testing.TB) *Store {
	t.Helper()
	pool, err := pg.Open(context.Background(), pgtest.DSN(t), pg.Options{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(pool.Close)
	return New(pool)
}
