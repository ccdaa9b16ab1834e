// Package store owns every SQL statement of hubctl. Its statements live in
// .sql files beside the Go that runs them; the layer they share (the pool,
// transactions, typed errors, LISTEN, batches, migrations) is package pg.
package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// Store is the shared handle on the database.
type Store struct {
	Pool *pgxpool.Pool
}

// Options tune the pool.
type Options = pg.Options

// Open connects a pool and checks that the server answers.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	pool, err := pg.Open(ctx, dsn, opts)
	if err != nil {
		return nil, err
	}
	return &Store{Pool: pool}, nil
}

// Close releases every connection.
func (s *Store) Close() { s.Pool.Close() }

// Ping reports whether the database answers; readiness probes use it.
func (s *Store) Ping(ctx context.Context) error {
	return pg.Classify(s.Pool.Ping(ctx))
}

// InTx runs fn in one transaction (pg.InTx).
func (s *Store) InTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return pg.InTx(ctx, s.Pool, fn)
}

// The typed errors of pg, under the names callers know.
var (
	ErrNotFound       = pg.ErrNotFound
	ErrConflict       = pg.ErrConflict
	ErrUnavailable    = pg.ErrUnavailable
	ErrSchemaOutdated = pg.ErrSchemaOutdated
)

// IsUnavailable is pg.IsUnavailable.
func IsUnavailable(err error) bool { return pg.IsUnavailable(err) }

// Schema migrations, from pg.
type (
	Migrator     = pg.Migrator
	SchemaStatus = pg.SchemaStatus
)

// NewMigrator is pg.NewMigrator.
func NewMigrator(ctx context.Context, dsn string) (*Migrator, error) { return pg.NewMigrator(ctx, dsn) }

// CheckSchema is pg.CheckSchema.
func CheckSchema(ctx context.Context, dsn string) error { return pg.CheckSchema(ctx, dsn) }

// MigrateUp is pg.MigrateUp.
func MigrateUp(ctx context.Context, dsn string) error { return pg.MigrateUp(ctx, dsn) }

// EmbeddedVersions is pg.EmbeddedVersions.
func EmbeddedVersions() ([]uint, error) { return pg.EmbeddedVersions() }
