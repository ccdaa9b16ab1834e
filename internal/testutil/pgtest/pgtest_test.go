package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hubctl/hubctl/migrations"
)

func TestMain(m *testing.M) { Main(m) }

func TestWithDatabase(t *testing.T) {
	tests := []struct {
		dsn, want string
	}{
		{
			dsn:  "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
			want: "postgres://postgres@127.0.0.1:5432/hubctl_t_x?sslmode=disable",
		},
		{
			dsn:  "postgresql://u:p%40ss@db.example:6543?sslmode=require",
			want: "postgresql://u:p%40ss@db.example:6543/hubctl_t_x?sslmode=require",
		},
		{
			dsn:  "postgres://u@h/admin?dbname=other&sslmode=disable",
			want: "postgres://u@h/hubctl_t_x?sslmode=disable",
		},
		{
			dsn:  "host=127.0.0.1 port=5432 user=postgres dbname=postgres",
			want: "host=127.0.0.1 port=5432 user=postgres dbname=postgres dbname=hubctl_t_x",
		},
	}
	for _, tt := range tests {
		got, err := withDatabase(tt.dsn, "hubctl_t_x")
		if err != nil || got != tt.want {
			t.Errorf("withDatabase(%q) = %q, %v; want %q", tt.dsn, got, err, tt.want)
		}
		// The result must name the database for pgx, whatever the form.
		cfg, err := pgx.ParseConfig(got)
		if err != nil || cfg.Database != "hubctl_t_x" {
			t.Errorf("pgx reads %q as database %q (err %v), want hubctl_t_x", got, cfg.Database, err)
		}
	}
	if _, err := withDatabase("postgres://u:secret@h:bad/x", "d"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("withDatabase on a bad URL = %v, want an error that does not echo the password", err)
	}
}

func TestMigrationsHash(t *testing.T) {
	base := fstest.MapFS{
		"000001_init.up.sql":   {Data: []byte("CREATE TABLE a (id int);")},
		"000001_init.down.sql": {Data: []byte("DROP TABLE a;")},
	}
	edited := fstest.MapFS{
		"000001_init.up.sql":   {Data: []byte("CREATE TABLE a (id bigint);")},
		"000001_init.down.sql": {Data: []byte("DROP TABLE a;")},
	}
	renamed := fstest.MapFS{
		"000001_start.up.sql":   {Data: []byte("CREATE TABLE a (id int);")},
		"000001_start.down.sql": {Data: []byte("DROP TABLE a;")},
	}
	// Moving bytes between a name and its content must change the hash.
	shifted := fstest.MapFS{
		"000001_init.up.sql":   {Data: []byte("CREATE TABLE a (id int);DROP TABLE a;")},
		"000001_init.down.sql": {Data: []byte("")},
	}
	withOther := fstest.MapFS{
		"000001_init.up.sql":   {Data: []byte("CREATE TABLE a (id int);")},
		"000001_init.down.sql": {Data: []byte("DROP TABLE a;")},
		"README.md":            {Data: []byte("not a migration")},
	}
	hash := func(fsys fstest.MapFS) string {
		t.Helper()
		h, err := migrationsHash(fsys)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	h := hash(base)
	if len(h) != 12 || strings.Trim(h, "0123456789abcdef") != "" {
		t.Errorf("hash %q is not 12 lowercase hex digits", h)
	}
	for name, other := range map[string]fstest.MapFS{"edited": edited, "renamed": renamed, "shifted": shifted} {
		if hash(other) == h {
			t.Errorf("%s migrations hash like the original", name)
		}
	}
	if hash(withOther) != h {
		t.Error("a file that is not a migration changed the hash")
	}
	if _, err := migrationsHash(fstest.MapFS{}); err == nil {
		t.Error("an empty migration set hashed without error")
	}
	if _, err := migrationsHash(migrations.FS); err != nil {
		t.Errorf("embedded migrations: %v", err)
	}
}

func TestOwnerOf(t *testing.T) {
	tests := []struct {
		name   string
		owner  string
		wantOK bool
	}{
		{name: "hubctl_t_0a1b2c3d_1", owner: "0a1b2c3d", wantOK: true},
		{name: "hubctl_t_0a1b2c3d_123456", owner: "0a1b2c3d", wantOK: true},
		{name: "hubctl_t_0A1B2C3D_1"},
		{name: "hubctl_t_0a1b2c3_1"},
		{name: "hubctl_t_0a1b2c3d"},
		{name: "hubctl_t_0a1b2c3d_x"},
		{name: "hubctl_t_0a1b2c3d_1_2"},
		{name: "hubctl_tmpl_0123456789ab"},
		{name: "postgres"},
	}
	for _, tt := range tests {
		owner, ok := ownerOf(tt.name)
		if owner != tt.owner || ok != tt.wantOK {
			t.Errorf("ownerOf(%q) = %q, %v; want %q, %v", tt.name, owner, ok, tt.owner, tt.wantOK)
		}
	}
}

func TestLockKeysDoNotCollideAcrossKinds(t *testing.T) {
	keys := map[int64]string{}
	for _, claim := range [][2]string{{"owner", "abc"}, {"template", "abc"}, {"build", ""}, {"owner", "abd"}} {
		k := lockKey(claim[0], claim[1])
		if prev, dup := keys[k]; dup {
			t.Errorf("lockKey%v = lockKey of %s", claim, prev)
		}
		keys[k] = fmt.Sprint(claim)
	}
}

func TestDSNGivesMigratedIsolatedDatabases(t *testing.T) {
	t.Parallel()
	a, b := DSN(t), DSN(t)
	if a == b {
		t.Fatalf("two calls returned the same database %s", a)
	}
	latest := latestMigration(t)
	for _, dsn := range []string{a, b} {
		var version int64
		var dirty bool
		queryRow(t, dsn, "SELECT version, dirty FROM schema_migrations", &version, &dirty)
		if version != latest || dirty {
			t.Errorf("%s: schema at version %d (dirty %v), want %d", dsn, version, dirty, latest)
		}
	}
	exec(t, a, "INSERT INTO tenants (id) VALUES ('acme')")
	var n int
	queryRow(t, b, "SELECT count(*) FROM tenants", &n)
	if n != 0 {
		t.Errorf("a row written to one test database shows in another (%d rows)", n)
	}
}

func TestEmptyDSNHasNoSchema(t *testing.T) {
	t.Parallel()
	var tables int
	queryRow(t, EmptyDSN(t), "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'", &tables)
	if tables != 0 {
		t.Errorf("empty database has %d tables", tables)
	}
}

func TestDatabasesAreDroppedAtCleanup(t *testing.T) {
	t.Parallel()
	var name string
	t.Run("user", func(t *testing.T) {
		pool := Pool(t)
		if err := pool.QueryRow(t.Context(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
	})
	if name == "" {
		t.Fatal("the subtest learned no database name")
	}
	if databaseExists(t, need(t).admin, name) {
		t.Errorf("database %s outlived its test", name)
	}
}

func TestParallelTests(t *testing.T) {
	t.Parallel()
	for i := range 8 {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			t.Parallel()
			pool := Pool(t)
			tenant := fmt.Sprintf("tenant-%d", i)
			if _, err := pool.Exec(t.Context(), "INSERT INTO tenants (id) VALUES ($1)", tenant); err != nil {
				t.Fatal(err)
			}
			var ids []string
			rows, err := pool.Query(t.Context(), "SELECT id FROM tenants")
			if err == nil {
				ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
			}
			if err != nil || len(ids) != 1 || ids[0] != tenant {
				t.Errorf("tenants = %q, %v; want only %s", ids, err, tenant)
			}
		})
	}
}

func TestSweepDropsOnlyUnclaimedDatabases(t *testing.T) {
	srv := need(t)
	ctx := t.Context()
	deadOwner, err := randomOwner()
	if err != nil {
		t.Fatal(err)
	}
	abandoned := testDBPrefix + deadOwner + "_1"
	oldTemplate := templatePrefix + "00000000" + deadOwner[:4]
	for _, stmt := range []string{
		"CREATE DATABASE " + pgx.Identifier{abandoned}.Sanitize() + " TEMPLATE template0",
		"CREATE DATABASE " + pgx.Identifier{oldTemplate}.Sanitize() + " TEMPLATE template0 IS_TEMPLATE true ALLOW_CONNECTIONS false",
	} {
		if _, err := srv.admin.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, name := range []string{abandoned, oldTemplate} {
			_, _ = srv.admin.Exec(context.Background(), "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH IS_TEMPLATE false")
			_, _ = srv.admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize())
		}
	})
	ours, err := pgx.ParseConfig(DSN(t))
	if err != nil {
		t.Fatal(err)
	}

	srv.sweep(ctx)

	for name, wantKept := range map[string]bool{
		abandoned:     false,
		oldTemplate:   false,
		ours.Database: true,
		srv.template:  true,
	} {
		if got := databaseExists(t, srv.admin, name); got != wantKept {
			t.Errorf("after the sweep, database %s exists = %v, want %v", name, got, wantKept)
		}
	}
}

func TestStartsOwnServerWhenNoneAnswers(t *testing.T) {
	t.Parallel()
	nobody := "postgres://postgres@127.0.0.1:" + strconv.Itoa(closedPort(t)) + "/postgres?sslmode=disable"
	srv, err := setup(t.Context(), "", nobody)
	var noServer *noServerError
	if errors.As(err, &noServer) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.close(); err != nil {
			t.Errorf("close: %v", err)
		}
		select {
		case <-srv.cluster.Done():
		default:
			t.Error("the started server still runs after close")
		}
	})
	if srv.cluster == nil {
		t.Fatal("setup used an existing server; want one it started")
	}
	dsn := srv.createDatabase(t, srv.template)
	var version int64
	queryRow(t, dsn, "SELECT version FROM schema_migrations", &version)
	if want := latestMigration(t); version != want {
		t.Errorf("schema at version %d on the started server, want %d", version, want)
	}
}

func TestUnreachableEnvDSNIsAnError(t *testing.T) {
	t.Parallel()
	dsn := "postgres://postgres@127.0.0.1:" + strconv.Itoa(closedPort(t)) + "/postgres?sslmode=disable"
	_, err := setup(t.Context(), dsn, localDSN)
	var noServer *noServerError
	if err == nil || errors.As(err, &noServer) || !strings.Contains(err.Error(), EnvDSN) {
		t.Errorf("setup with an unreachable %s = %v; want an error naming it that does not skip tests", EnvDSN, err)
	}
}

// latestMigration is the newest version among the embedded migrations.
func latestMigration(t *testing.T) int64 {
	t.Helper()
	names, err := migrationNames()
	if err != nil {
		t.Fatal(err)
	}
	var latest int64
	for _, name := range names {
		num, _, _ := strings.Cut(name, "_")
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			t.Fatalf("migration %s: %v", name, err)
		}
		latest = max(latest, v)
	}
	return latest
}

func migrationNames() ([]string, error) {
	entries, err := migrations.FS.ReadDir(".")
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".up.sql") {
			names = append(names, e.Name())
		}
	}
	return names, err
}

func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return port
}

func databaseExists(t *testing.T, admin *pgxpool.Pool, name string) bool {
	t.Helper()
	var exists bool
	if err := admin.QueryRow(t.Context(), "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	return exists
}

func exec(t *testing.T, dsn, sql string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func queryRow(t *testing.T, dsn, sql string, dest ...any) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(t.Context(), sql).Scan(dest...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
