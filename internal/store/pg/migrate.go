package pg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/hubctl/hubctl/migrations"
)

// SchemaStatus describes where a database stands against the embedded
// migrations.
type SchemaStatus struct {
	Current uint   // 0 when no migration has been applied
	Latest  uint   // newest embedded migration
	Dirty   bool   // a migration failed half-way; needs an operator
	Pending []uint // embedded versions newer than Current, ascending
}

// UpToDate reports whether the schema matches this binary exactly.
func (s SchemaStatus) UpToDate() bool { return !s.Dirty && s.Current == s.Latest }

// ErrSchemaOutdated is returned by CheckSchema when serve must not start.
var ErrSchemaOutdated = errors.New("database schema is not at this binary's version")

// Migrator applies the embedded migrations to one database.
type Migrator struct {
	m *migrate.Migrate
}

// NewMigrator connects to dsn with its own short-lived connection, so
// migrations never compete with the pool for connections. ctx bounds the
// connection attempt: a server that hangs must not hang start-up.
func NewMigrator(ctx context.Context, dsn string) (*Migrator, error) {
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return nil, fmt.Errorf("load embedded migrations: %w", err)
	}
	cfg, err := parseConfig(dsn)
	if err != nil {
		return nil, err
	}
	db := stdlib.OpenDB(*cfg.ConnConfig)
	pingCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		_ = db.Close()
		return nil, Classify(fmt.Errorf("connect to PostgreSQL at %s: %w", describeTarget(cfg), err))
	}
	drv, err := migratepgx.WithInstance(db, &migratepgx.Config{})
	if err != nil {
		_ = db.Close()
		return nil, Classify(fmt.Errorf("open migration driver: %w", err))
	}
	m, err := migrate.NewWithInstance("iofs", src, "pgx5", drv)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("init migrations: %w", err)
	}
	return &Migrator{m: m}, nil
}

// Close releases the migrator's connection.
func (mg *Migrator) Close() error {
	srcErr, dbErr := mg.m.Close()
	return errors.Join(srcErr, dbErr)
}

// Up applies every pending migration. Already current is not an error.
func (mg *Migrator) Up() error {
	if err := mg.m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate up: %w", err)
	}
	return nil
}

// To migrates up or down to exactly version, so a test can hold data
// written at one version while the next step runs.
func (mg *Migrator) To(version uint) error {
	if err := mg.m.Migrate(version); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("migrate to %d: %w", version, err)
	}
	return nil
}

// Down rolls back steps migrations (all of them when steps <= 0).
func (mg *Migrator) Down(steps int) error {
	var err error
	if steps <= 0 {
		err = mg.m.Down()
	} else {
		err = mg.m.Steps(-steps)
	}
	// Rolling back more steps than are applied, or any from an empty
	// schema, leaves the schema empty: what was asked, not an error.
	var short migrate.ErrShortLimit
	if err != nil && !errors.Is(err, migrate.ErrNoChange) && !errors.Is(err, os.ErrNotExist) && !errors.As(err, &short) {
		return fmt.Errorf("migrate down: %w", err)
	}
	return nil
}

// Force records version as applied and clean without running anything: the
// way out after an operator repaired a migration that failed half-way.
func (mg *Migrator) Force(version int) error {
	if err := mg.m.Force(version); err != nil {
		return fmt.Errorf("migrate force %d: %w", version, err)
	}
	return nil
}

// Status reports the applied and embedded versions.
func (mg *Migrator) Status() (SchemaStatus, error) {
	versions, err := EmbeddedVersions()
	if err != nil {
		return SchemaStatus{}, err
	}
	st := SchemaStatus{}
	if len(versions) > 0 {
		st.Latest = versions[len(versions)-1]
	}
	v, dirty, err := mg.m.Version()
	switch {
	case errors.Is(err, migrate.ErrNilVersion):
	case err != nil:
		return SchemaStatus{}, Classify(fmt.Errorf("read schema version: %w", err))
	default:
		st.Current, st.Dirty = v, dirty
	}
	for _, ver := range versions {
		if ver > st.Current {
			st.Pending = append(st.Pending, ver)
		}
	}
	return st, nil
}

// CheckSchema fails with ErrSchemaOutdated (and a message telling the
// operator what to run) unless dsn's schema is exactly this binary's.
func CheckSchema(ctx context.Context, dsn string) error {
	mg, err := NewMigrator(ctx, dsn)
	if err != nil {
		return err
	}
	defer mg.Close()
	st, err := mg.Status()
	if err != nil {
		return err
	}
	switch {
	case st.Dirty:
		return fmt.Errorf("%w: migration %d failed half-way; inspect the database, then `hubctl migrate force VERSION`", ErrSchemaOutdated, st.Current)
	case st.Current < st.Latest:
		return fmt.Errorf("%w: database is at version %d, this binary needs %d; run `hubctl migrate up`", ErrSchemaOutdated, st.Current, st.Latest)
	case st.Current > st.Latest:
		return fmt.Errorf("%w: database is at version %d, newer than this binary's %d; upgrade hubctl", ErrSchemaOutdated, st.Current, st.Latest)
	}
	return nil
}

// MigrateUp is the one-call form used by `hubctl dev` and the test harness.
func MigrateUp(ctx context.Context, dsn string) error {
	mg, err := NewMigrator(ctx, dsn)
	if err != nil {
		return err
	}
	defer mg.Close()
	return mg.Up()
}

// EmbeddedVersions lists the versions of the embedded migrations, ascending.
func EmbeddedVersions() ([]uint, error) {
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		return nil, err
	}
	seen := map[uint]bool{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".up.sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		if !ok {
			return nil, fmt.Errorf("migration %q: name must be NNNNNN_title.up.sql", name)
		}
		v, err := strconv.ParseUint(num, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("migration %q: bad version: %w", name, err)
		}
		seen[uint(v)] = true
	}
	out := make([]uint, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}
