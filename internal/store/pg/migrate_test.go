package pg_test

import (
	"context"
	"errors"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/migrations"
)

// TestMain stops the PostgreSQL server pgtest may start for this package.
// It is the store package's only TestMain: tests in package store share it.
func TestMain(m *testing.M) { pgtest.Main(m) }

// specTables are the tables the schema must provide (migration 1).
var specTables = []string{
	"delivery_attempts", "delivery_jobs", "events", "kafka_offsets", "pull_cursors",
	"pull_entries", "quarantine", "subscriptions", "tenant_api_keys", "tenants",
}

func TestMigrateUpDownUp(t *testing.T) {
	t.Parallel()
	dsn := pgtest.EmptyDSN(t)
	versions := embeddedVersions(t)
	latest := versions[len(versions)-1]
	mg := newMigrator(t, dsn)

	assertStatus(t, mg, "before any migration", pg.SchemaStatus{Latest: latest, Pending: versions})

	if err := mg.Up(); err != nil {
		t.Fatalf("Up: %v", err)
	}
	assertStatus(t, mg, "after up", pg.SchemaStatus{Current: latest, Latest: latest})
	if got := publicTables(t, dsn); !containsAll(got, append(specTables, "schema_migrations")) {
		t.Fatalf("after up, tables = %q, want at least %q and schema_migrations", got, specTables)
	}

	if err := mg.Down(1); err != nil {
		t.Fatalf("Down(1): %v", err)
	}
	previous := uint(0)
	if len(versions) > 1 {
		previous = versions[len(versions)-2]
	}
	assertStatus(t, mg, "after one step down", pg.SchemaStatus{Current: previous, Latest: latest, Pending: []uint{latest}})

	if err := mg.Down(0); err != nil {
		t.Fatalf("Down(0): %v", err)
	}
	assertStatus(t, mg, "after down all", pg.SchemaStatus{Latest: latest, Pending: versions})
	if left := publicRelations(t, dsn); len(left) > 0 {
		t.Errorf("after down all, relations besides schema_migrations remain: %q", left)
	}

	if err := pg.MigrateUp(context.Background(), dsn); err != nil {
		t.Fatalf("MigrateUp after down: %v", err)
	}
	if err := pg.MigrateUp(context.Background(), dsn); err != nil {
		t.Fatalf("MigrateUp on a current schema: %v", err)
	}
	assertStatus(t, mg, "after up again", pg.SchemaStatus{Current: latest, Latest: latest})
	if got := publicTables(t, dsn); !containsAll(got, specTables) {
		t.Errorf("after up again, tables = %q, want at least %q", got, specTables)
	}
}

func TestCheckSchema(t *testing.T) {
	t.Parallel()
	versions := embeddedVersions(t)
	latest := versions[len(versions)-1]
	tests := []struct {
		name    string
		dsn     func(t testing.TB) string
		wantErr string // part of the message; "" means the schema passes
	}{
		{
			name:    "never migrated",
			dsn:     pgtest.EmptyDSN,
			wantErr: "run `hubctl migrate up`",
		},
		{
			name: "one migration behind",
			dsn: func(t testing.TB) string {
				dsn := pgtest.DSN(t)
				if err := newMigrator(t, dsn).Down(1); err != nil {
					t.Fatal(err)
				}
				return dsn
			},
			wantErr: "run `hubctl migrate up`",
		},
		{
			name: "current",
			dsn: func(t testing.TB) string {
				dsn := pgtest.EmptyDSN(t)
				if err := pg.MigrateUp(context.Background(), dsn); err != nil {
					t.Fatal(err)
				}
				return dsn
			},
		},
		{
			name: "test database from pgtest",
			dsn:  pgtest.DSN,
		},
		{
			name:    "newer than this binary",
			dsn:     withSchemaVersion("version = " + strconv.FormatUint(uint64(latest)+1, 10)),
			wantErr: "upgrade hubctl",
		},
		{
			name:    "dirty",
			dsn:     withSchemaVersion("dirty = true"),
			wantErr: "hubctl migrate force",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := pg.CheckSchema(t.Context(), tt.dsn(t))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckSchema = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, pg.ErrSchemaOutdated) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("CheckSchema = %v, want ErrSchemaOutdated saying %q", err, tt.wantErr)
			}
		})
	}
}

func TestEmbeddedVersions(t *testing.T) {
	versions := embeddedVersions(t)
	if !slices.IsSorted(versions) || len(slices.Compact(slices.Clone(versions))) != len(versions) {
		t.Errorf("EmbeddedVersions() = %v, want strictly ascending", versions)
	}

	name := regexp.MustCompile(`^(\d+)_[a-z0-9_]+\.(up|down)\.sql$`)
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	ups := map[uint]string{}
	downs := map[uint]string{}
	for _, e := range entries {
		m := name.FindStringSubmatch(e.Name())
		if m == nil {
			t.Errorf("migration file %q is not named NNNNNN_title.up.sql or .down.sql", e.Name())
			continue
		}
		v, err := strconv.ParseUint(m[1], 10, 32)
		if err != nil {
			t.Errorf("migration file %q: %v", e.Name(), err)
			continue
		}
		files := ups
		if m[2] == "down" {
			files = downs
		}
		if other, dup := files[uint(v)]; dup {
			t.Errorf("version %d has two %s migrations: %s and %s", v, m[2], other, e.Name())
		}
		files[uint(v)] = e.Name()
	}
	for v, up := range ups {
		down, ok := downs[v]
		switch {
		case !ok:
			t.Errorf("%s has no .down.sql", up)
		case strings.TrimSuffix(up, ".up.sql") != strings.TrimSuffix(down, ".down.sql"):
			t.Errorf("%s is paired with %s: titles differ", up, down)
		}
	}
	for v, down := range downs {
		if _, ok := ups[v]; !ok {
			t.Errorf("%s has no .up.sql", down)
		}
	}
	upVersions := make([]uint, 0, len(ups))
	for v := range ups {
		upVersions = append(upVersions, v)
	}
	slices.Sort(upVersions)
	if !slices.Equal(versions, upVersions) {
		t.Errorf("EmbeddedVersions() = %v, want the versions of the .up.sql files %v", versions, upVersions)
	}
}

func embeddedVersions(t *testing.T) []uint {
	t.Helper()
	versions, err := pg.EmbeddedVersions()
	if err != nil {
		t.Fatal(err)
	}
	if len(versions) == 0 {
		t.Fatal("no migrations embedded")
	}
	return versions
}

func newMigrator(t testing.TB, dsn string) *pg.Migrator {
	t.Helper()
	mg, err := pg.NewMigrator(context.Background(), dsn)
	if err != nil {
		t.Fatalf("NewMigrator: %v", err)
	}
	t.Cleanup(func() {
		if err := mg.Close(); err != nil {
			t.Errorf("close migrator: %v", err)
		}
	})
	return mg
}

func assertStatus(t *testing.T, mg *pg.Migrator, when string, want pg.SchemaStatus) {
	t.Helper()
	got, err := mg.Status()
	if err != nil {
		t.Fatalf("%s: Status: %v", when, err)
	}
	if got.Current != want.Current || got.Latest != want.Latest || got.Dirty != want.Dirty ||
		!slices.Equal(got.Pending, want.Pending) || got.UpToDate() != (want.Current == want.Latest && !want.Dirty) {
		t.Fatalf("%s: Status() = %+v (up to date %v), want %+v", when, got, got.UpToDate(), want)
	}
}

// withSchemaVersion returns a migrated database whose schema_migrations row
// was then changed by set, as an operator or a failed migration would.
func withSchemaVersion(set string) func(t testing.TB) string {
	return func(t testing.TB) string {
		dsn := pgtest.DSN(t)
		conn := connect(t, dsn)
		if _, err := conn.Exec(t.Context(), "UPDATE schema_migrations SET "+set); err != nil {
			t.Fatal(err)
		}
		return dsn
	}
}

func publicTables(t *testing.T, dsn string) []string {
	t.Helper()
	return queryStrings(t, dsn, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`)
}

// publicRelations lists what a full rollback must not leave behind: tables,
// indexes, sequences and views other than golang-migrate's own.
func publicRelations(t *testing.T, dsn string) []string {
	t.Helper()
	return queryStrings(t, dsn, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = 'public' AND c.relname NOT IN ('schema_migrations', 'schema_migrations_pkey')
		ORDER BY c.relname`)
}

func queryStrings(t testing.TB, dsn, sql string) []string {
	t.Helper()
	rows, err := connect(t, dsn).Query(t.Context(), sql)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func connect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// Rolling back more than is applied, or anything from an empty schema, ends
// with an empty schema and no error: what the operator asked for.
func TestMigrateDownPastTheStart(t *testing.T) {
	mg := newMigrator(t, pgtest.EmptyDSN(t))
	if err := mg.Down(1); err != nil {
		t.Fatalf("Down(1) on an empty schema: %v", err)
	}
	if err := mg.Up(); err != nil {
		t.Fatal(err)
	}
	if err := mg.Down(len(embeddedVersions(t)) + 4); err != nil {
		t.Fatalf("Down(more than applied): %v", err)
	}
	st, err := mg.Status()
	if err != nil {
		t.Fatal(err)
	}
	if st.Current != 0 {
		t.Errorf("after rolling back everything, version = %d", st.Current)
	}
}

func TestNewMigratorUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	// Port 1 on loopback refuses at once; nothing leaves the machine.
	_, err := pg.NewMigrator(ctx, "postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
	if !errors.Is(err, pg.ErrUnavailable) {
		t.Fatalf("NewMigrator against a closed port = %v, want ErrUnavailable", err)
	}
}
