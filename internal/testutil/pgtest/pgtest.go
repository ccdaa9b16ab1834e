// Package pgtest gives each test a database of its own on a real
// PostgreSQL: migrated to this binary's schema ([DSN], [Pool]) or empty
// ([EmptyDSN]), dropped when the test ends.
//
// # Which server
//
// Chosen once per test binary: the one STREAMING_HUB_TEST_POSTGRES_DSN names
// when it is set (its database is used for administration only); else
// 127.0.0.1:5432 as user postgres without a password, if it answers within a
// second; else a temporary cluster started with [devenv.StartPostgres] and
// shared by the package's tests. Packages should stop that cluster from
// TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// Without it, the cluster still dies with the test binary on Linux, and a
// later start removes its files. With no server to be had, tests are skipped,
// or fail when CI=true. PostgreSQL 13 or newer is needed (DROP DATABASE ...
// WITH (FORCE)).
//
// # Speed
//
// The migrations run once per server and migration set, into a template
// database named after a hash of the embedded migration files
// (hubctl_tmpl_<hash>); each test's database (hubctl_t_<owner>_<n>) is a
// copy of it, which takes milliseconds.
//
// # Sharing a server
//
// `go test ./...` runs packages in parallel processes against the same
// server. Each process holds, on one session for its whole life, an
// exclusive advisory lock on its owner token and a shared one on the
// template it uses; templates are built under a third, global lock. Anyone
// who can take a database's lock exclusively knows nobody uses it, which is
// how templates of older migration sets and databases of killed test
// binaries are dropped safely. Advisory locks are scoped to a database, so
// every process takes them through the same administrative database.
//
// pgtest deliberately does not import internal/store/..., so that the
// store's own tests can use it; it applies the migrations with
// golang-migrate exactly as the store does.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-migrate/migrate/v4"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/hubctl/hubctl/internal/devenv"
	"github.com/hubctl/hubctl/migrations"
)

const (
	// EnvDSN names the server to test against, as a URL or key=value DSN
	// of a superuser (or a role allowed to create databases).
	EnvDSN = "STREAMING_HUB_TEST_POSTGRES_DSN"

	localDSN     = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	probeTimeout = time.Second
	setupTimeout = 2 * time.Minute
	opTimeout    = time.Minute

	templatePrefix = "hubctl_tmpl_"
	testDBPrefix   = "hubctl_t_"
)

// server is the PostgreSQL this test binary uses.
type server struct {
	adminDSN string
	admin    *pgxpool.Pool
	holder   *pgx.Conn        // holds our advisory locks until we exit
	cluster  *devenv.Postgres // nil unless we started the server
	owner    string           // names our databases; its lock says we live
	template string
	seq      atomic.Uint64
}

var shared struct {
	once sync.Once
	srv  *server
	err  error
}

// noServerError means no server could be had at all, which skips tests
// outside CI instead of failing them.
type noServerError struct{ cause error }

func (e *noServerError) Error() string { return "no PostgreSQL server: " + e.cause.Error() }
func (e *noServerError) Unwrap() error { return e.cause }

// DSN returns the URL of a new database holding the migrated schema and no
// rows, dropped at the end of the test.
func DSN(t testing.TB) string {
	t.Helper()
	srv := need(t)
	return srv.createDatabase(t, srv.template)
}

// EmptyDSN returns the URL of a new database without any migration applied,
// dropped at the end of the test.
func EmptyDSN(t testing.TB) string {
	t.Helper()
	return need(t).createDatabase(t, "template0")
}

// Pool returns a pool on a new migrated database (see DSN), closed at the
// end of the test.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	dsn := DSN(t)
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatalf("pgtest: open pool: %v", err)
	}
	t.Cleanup(pool.Close) // runs before the database is dropped
	return pool
}

// Main runs the package's tests, then releases the server pgtest used and
// stops it if pgtest started it. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	// Taking the once orders this after any setup and keeps a straggling
	// setup from starting a server nobody would stop.
	shared.once.Do(func() { shared.err = errors.New("pgtest: used after Main returned") })
	if shared.srv != nil {
		if err := shared.srv.close(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
		}
	}
	os.Exit(code)
}

func need(t testing.TB) *server {
	t.Helper()
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		shared.srv, shared.err = setup(ctx, os.Getenv(EnvDSN), localDSN)
	})
	if shared.err == nil {
		return shared.srv
	}
	var noServer *noServerError
	if errors.As(shared.err, &noServer) && os.Getenv("CI") != "true" {
		t.Skipf("pgtest: %v. Start PostgreSQL on 127.0.0.1:5432 trusting user postgres, install it so tests "+
			"can start their own (apt-get install postgresql), or set %s", shared.err, EnvDSN)
	}
	t.Fatalf("pgtest: %v", shared.err)
	return nil
}

// setup finds a server and prepares the template. envDSN and defaultDSN are
// parameters so tests can force each choice.
func setup(ctx context.Context, envDSN, defaultDSN string) (*server, error) {
	adminDSN, cluster, err := findServer(ctx, envDSN, defaultDSN)
	if err != nil {
		return nil, err
	}
	srv, err := connect(ctx, adminDSN)
	if err != nil {
		if cluster != nil {
			_ = cluster.Stop(context.WithoutCancel(ctx))
		}
		return nil, err
	}
	srv.cluster = cluster
	if err := srv.prepareTemplate(ctx); err != nil {
		_ = srv.close()
		return nil, err
	}
	return srv, nil
}

func findServer(ctx context.Context, envDSN, defaultDSN string) (adminDSN string, cluster *devenv.Postgres, err error) {
	if envDSN != "" {
		// An explicit choice that does not work is an error, not a
		// reason to test against something else.
		if err := probe(ctx, envDSN, 10*time.Second); err != nil {
			return "", nil, fmt.Errorf("%s is set but its server does not answer: %w", EnvDSN, err)
		}
		return envDSN, nil, nil
	}
	if probe(ctx, defaultDSN, probeTimeout) == nil {
		return defaultDSN, nil, nil
	}
	pg, err := devenv.StartPostgres(ctx, devenv.PostgresOptions{Ephemeral: true})
	if err != nil {
		return "", nil, &noServerError{cause: err}
	}
	return pg.DSNFor("postgres"), pg, nil
}

func probe(ctx context.Context, dsn string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

// connect opens the admin pool and the lock-holding session, and claims a
// fresh owner token.
func connect(ctx context.Context, adminDSN string) (*server, error) {
	admin, err := pgxpool.New(ctx, adminDSN)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	holder, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		admin.Close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	srv := &server{adminDSN: adminDSN, admin: admin, holder: holder}
	// A clash of random tokens between live processes is all but
	// impossible; the try-lock makes it harmless anyway.
	for range 5 {
		owner, err := randomOwner()
		if err != nil {
			_ = srv.close()
			return nil, fmt.Errorf("draw an owner token: %w", err)
		}
		var locked bool
		if err := holder.QueryRow(ctx, tryAdvisoryLockSQL, pgx.StrictNamedArgs{"key": lockKey("owner", owner)}).Scan(&locked); err != nil {
			_ = srv.close()
			return nil, fmt.Errorf("take owner lock: %w", err)
		}
		if locked {
			srv.owner = owner
			return srv, nil
		}
	}
	_ = srv.close()
	return nil, errors.New("could not claim an owner token for this test binary")
}

func (s *server) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	errs := []error{s.holder.Close(ctx)}
	s.admin.Close()
	if s.cluster != nil {
		errs = append(errs, s.cluster.Stop(ctx))
	}
	return errors.Join(errs...)
}

// prepareTemplate makes sure the template for the embedded migrations exists
// and is complete, claims it for this process, and drops what others left.
func (s *server) prepareTemplate(ctx context.Context) error {
	hash, err := migrationsHash(migrations.FS)
	if err != nil {
		return fmt.Errorf("hash embedded migrations: %w", err)
	}
	name := templatePrefix + hash
	buildLock := lockKey("build", "")
	if _, err := s.holder.Exec(ctx, advisoryLockSQL, pgx.StrictNamedArgs{"key": buildLock}); err != nil {
		return fmt.Errorf("take template lock: %w", err)
	}
	defer func() {
		_, _ = s.holder.Exec(context.WithoutCancel(ctx), advisoryUnlockSQL, pgx.StrictNamedArgs{"key": buildLock})
	}()

	var exists, complete bool
	err = s.admin.QueryRow(ctx, findTemplateSQL, pgx.StrictNamedArgs{"name": name}).Scan(&exists, &complete)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("look for template %s: %w", name, err)
	}
	if !complete {
		if err := s.buildTemplate(ctx, name, exists); err != nil {
			return err
		}
	}
	if _, err := s.holder.Exec(ctx, advisoryLockSharedSQL, pgx.StrictNamedArgs{"key": lockKey("template", name)}); err != nil {
		return fmt.Errorf("claim template %s: %w", name, err)
	}
	s.template = name
	s.sweep(ctx)
	return nil
}

// buildTemplate migrates a new database and then marks it a template that
// accepts no connections: that mark is what says the migrations completed,
// so the leftover of a binary killed mid-way is rebuilt.
func (s *server) buildTemplate(ctx context.Context, name string, leftover bool) error {
	if leftover {
		if _, err := s.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop incomplete template %s: %w", name, err)
		}
	}
	if _, err := s.admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE template0"); err != nil {
		return fmt.Errorf("create template %s: %w", name, err)
	}
	dsn, err := withDatabase(s.adminDSN, name)
	if err != nil {
		return err
	}
	if err := migrateUp(dsn); err != nil {
		return fmt.Errorf("migrate template %s: %w", name, err)
	}
	if _, err := s.admin.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"); err != nil {
		return fmt.Errorf("seal template %s: %w", name, err)
	}
	return nil
}

// migrateUp applies the embedded migrations the way pg.MigrateUp does.
func migrateUp(dsn string) error {
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return err
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return err
	}
	drv, err := migratepgx.WithInstance(stdlib.OpenDB(*cfg), &migratepgx.Config{})
	if err != nil {
		return err
	}
	m, err := migrate.NewWithInstance("iofs", src, "pgx5", drv)
	if err != nil {
		_ = drv.Close()
		return err
	}
	upErr := m.Up()
	srcErr, dbErr := m.Close()
	if upErr != nil && !errors.Is(upErr, migrate.ErrNoChange) {
		return upErr
	}
	return errors.Join(srcErr, dbErr)
}

// sweep drops templates of other migration sets and test databases of
// binaries that have exited, where nobody holds their lock. It is best
// effort: whatever fails stays for a later run.
func (s *server) sweep(ctx context.Context) {
	rows, err := s.admin.Query(ctx, listSweptDatabasesSQL,
		pgx.StrictNamedArgs{"template_prefix": templatePrefix, "test_db_prefix": testDBPrefix})
	if err != nil {
		return
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	for _, name := range names {
		switch owner, isTestDB := ownerOf(name); {
		case name == s.template:
		case isTestDB:
			s.dropUnclaimed(ctx, name, lockKey("owner", owner), false)
		case strings.HasPrefix(name, templatePrefix):
			s.dropUnclaimed(ctx, name, lockKey("template", name), true)
		}
	}
}

// dropUnclaimed drops database name if the lock that claims it is free. The
// lock is taken on a session other than the holder's, so our own claims
// count as taken.
func (s *server) dropUnclaimed(ctx context.Context, name string, key int64, template bool) {
	conn, err := s.admin.Acquire(ctx)
	if err != nil {
		return
	}
	defer conn.Release()
	var free bool
	if err := conn.QueryRow(ctx, tryAdvisoryLockSQL, pgx.StrictNamedArgs{"key": key}).Scan(&free); err != nil || !free {
		return
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), advisoryUnlockSQL, pgx.StrictNamedArgs{"key": key})
	}()
	if template {
		if _, err := conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH IS_TEMPLATE false"); err != nil {
			return
		}
	}
	_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

func (s *server) createDatabase(t testing.TB, template string) string {
	t.Helper()
	name := testDBPrefix + s.owner + "_" + strconv.FormatUint(s.seq.Add(1), 10)
	dsn, err := withDatabase(s.adminDSN, name)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if _, err := s.admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{template}.Sanitize()); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		defer cancel()
		// FORCE ends sessions a test left open, so one leak does not
		// keep the database alive.
		if _, err := s.admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return dsn
}

// withDatabase points dsn, a URL or a key=value string, at database db.
func withDatabase(dsn, db string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			// url's errors quote the input, password included.
			return "", fmt.Errorf("%s is not a valid PostgreSQL URL", EnvDSN)
		}
		u.Path, u.RawPath = "/"+db, ""
		q := u.Query()
		if q.Has("dbname") { // would override the path
			q.Del("dbname")
			u.RawQuery = q.Encode()
		}
		return u.String(), nil
	}
	// In key=value strings the last setting of a key wins.
	return strings.TrimSpace(dsn) + " dbname=" + db, nil
}

// migrationsHash identifies a migration set: file names and contents, in
// name order. Twelve hex digits keep template names short and collisions out
// of reach.
func migrationsHash(fsys fs.FS) (string, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return "", err
	}
	if len(names) == 0 {
		return "", errors.New("no migrations embedded")
	}
	slices.Sort(names)
	h := sha256.New()
	for _, name := range names {
		content, err := fs.ReadFile(fsys, name)
		if err != nil {
			return "", err
		}
		// Lengths delimit the fields, so no two sets hash the same input.
		fmt.Fprintf(h, "%d:%s%d:", len(name), name, len(content))
		h.Write(content)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// ownerOf returns the owner token of a test database name,
// hubctl_t_<owner>_<n>.
func ownerOf(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, testDBPrefix)
	if !ok {
		return "", false
	}
	owner, seq, ok := strings.Cut(rest, "_")
	if !ok || !isOwnerToken(owner) {
		return "", false
	}
	if _, err := strconv.ParseUint(seq, 10, 64); err != nil {
		return "", false
	}
	return owner, true
}

const ownerTokenLen = 8

func isOwnerToken(s string) bool {
	if len(s) != ownerTokenLen {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func randomOwner() (string, error) {
	b := make([]byte, ownerTokenLen/2)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// lockKey maps a claim to an advisory lock key, in a namespace of its own so
// it cannot meet the keys of golang-migrate or the hub.
func lockKey(kind, name string) int64 {
	sum := sha256.Sum256([]byte("hubctl/pgtest/" + kind + "/" + name))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

//go:embed sql/try_advisory_lock.sql
var tryAdvisoryLockSQL string

//go:embed sql/advisory_lock.sql
var advisoryLockSQL string

//go:embed sql/advisory_lock_shared.sql
var advisoryLockSharedSQL string

//go:embed sql/advisory_unlock.sql
var advisoryUnlockSQL string

//go:embed sql/find_template.sql
var findTemplateSQL string

//go:embed sql/list_swept_databases.sql
var listSweptDatabasesSQL string
