package devenv

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPostgresRestartKeepsData walks the life of a `hubctl dev` data
// directory: clean restart, crash, and a stale pid file whose pid now
// belongs to another process.
func TestPostgresRestartKeepsData(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(reachableTempDir(t), "pg")

	first := startTestPostgres(t, PostgresOptions{DataDir: dataDir})
	execSQL(t, first.DSN(), "CREATE TABLE kept (v text)", "INSERT INTO kept VALUES ('before restart')")
	if err := first.Stop(t.Context()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "PG_VERSION")); err != nil {
		t.Fatalf("Stop removed the persistent cluster: %v", err)
	}

	// Not startTestPostgres: this one is crashed, so its Stop must fail.
	second, err := StartPostgres(t.Context(), PostgresOptions{DataDir: dataDir})
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	if got := second.DataDir(); got != dataDir {
		t.Errorf("DataDir() = %q, want %q", got, dataDir)
	}
	assertRows(t, second.DSN(), "before restart")
	execSQL(t, second.DSN(), "INSERT INTO kept VALUES ('before crash')")
	if err := second.proc.Signal(os.Kill); err != nil {
		t.Fatal(err)
	}
	<-second.Done()
	if err := second.Stop(t.Context()); err == nil {
		t.Error("Stop after a crash returned nil, want the exit status")
	}

	if _, ok := processWorkingDir(os.Getpid()); ok {
		// The crash left postmaster.pid naming a dead pid; make it name a
		// live process that is no postmaster, as after pid reuse.
		writePIDFile(t, dataDir, os.Getpid())
	}
	third := startTestPostgres(t, PostgresOptions{DataDir: dataDir})
	assertRows(t, third.DSN(), "before crash", "before restart")
}

func TestPostgresStartFailureQuotesServerLog(t *testing.T) {
	t.Parallel()
	if _, err := findBinDir(t.Context(), ""); err != nil {
		t.Skip(err)
	}
	// A taken port is reported as such before the server starts
	// (TestPostgresOnABusyPortTouchesNothing); a cluster whose
	// configuration the server rejects makes it exit with the reason in
	// its log.
	dataDir := filepath.Join(reachableTempDir(t), "pg")
	first := startTestPostgres(t, PostgresOptions{DataDir: dataDir, Ephemeral: true})
	if err := first.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	conf, err := os.OpenFile(filepath.Join(dataDir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conf.WriteString("\nshared_buffers = 'plenty'\n")
	if closeErr := conf.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		t.Fatal(err)
	}

	pg, err := StartPostgres(t.Context(), PostgresOptions{DataDir: dataDir, Ephemeral: true})
	if err == nil {
		_ = pg.Stop(context.Background())
		t.Fatal("StartPostgres with a broken configuration succeeded")
	}
	if !strings.Contains(err.Error(), "shared_buffers") {
		t.Errorf("StartPostgres error does not quote the server log saying why:\n%v", err)
	}
}

func TestPostgresRefusesClusterOfOtherVersion(t *testing.T) {
	t.Parallel()
	binDir, err := findBinDir(t.Context(), "")
	if err != nil {
		t.Skip(err)
	}
	dataDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dataDir, "PG_VERSION"), []byte("9.4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = ensureCluster(t.Context(), binDir, dataDir, osUser{}, true)
	if err == nil || !strings.Contains(err.Error(), "holds a PostgreSQL 9.4 cluster") {
		t.Fatalf("ensureCluster on a PostgreSQL 9.4 cluster = %v, want an error naming both versions", err)
	}
}

// reachableTempDir is a temporary directory the postgres OS user can enter
// when the tests run as root (t.TempDir is private to its creator).
func reachableTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "devenv-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func execSQL(t *testing.T, dsn string, statements ...string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, stmt := range statements {
		if _, err := conn.Exec(t.Context(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// assertRows checks the rows of table kept, in sorted order.
func assertRows(t *testing.T, dsn string, want ...string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), "SELECT v FROM kept ORDER BY v")
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("rows = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("rows = %q, want %q", got, want)
		}
	}
}
