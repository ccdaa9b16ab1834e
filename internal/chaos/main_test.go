//go:build linux

package chaos

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/devenv"
)

// roundsEnv names the number of SIGKILL rounds; make chaos sets it.
const roundsEnv = "CHAOS_ROUNDS"

// shortRounds is the short version's number of rounds, run by make test.
const shortRounds = 3

var (
	build struct {
		once sync.Once
		dir  string
		bin  string
		err  error
	}
	// shared is the PostgreSQL cluster of every scenario that does not
	// crash its database; the one that does gets its own.
	shared struct {
		once sync.Once
		pg   *devenv.Postgres
		err  error
	}
)

func TestMain(m *testing.M) {
	flag.Parse()
	// The short version's scenarios spend most of their time waiting (for
	// leases to expire, for the hub to catch up), so all of them run at
	// once rather than GOMAXPROCS at a time; an explicit -parallel wins.
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit && os.Getenv(roundsEnv) == "" {
		_ = flag.Set("test.parallel", "8")
	}
	code := m.Run()
	if shared.pg != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := shared.pg.Stop(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "chaos: stop PostgreSQL:", err)
		}
		cancel()
	}
	if build.dir != "" {
		_ = os.RemoveAll(build.dir)
	}
	os.Exit(code)
}

// rounds is the number of SIGKILL rounds of this run.
func rounds(t *testing.T) int {
	t.Helper()
	raw := os.Getenv(roundsEnv)
	if raw == "" {
		return shortRounds
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number of rounds", roundsEnv, raw)
	}
	return n
}

// long reports whether this is make chaos's run. The short version runs
// its scenarios side by side to stay near a minute; the long one runs them
// one after another so their timings do not disturb each other.
func long(t *testing.T) bool { return rounds(t) > shortRounds }

// prelude skips the suite in -short runs and lets the short version's
// scenarios run in parallel.
func prelude(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("the chaos suite builds and runs the hubctl binary")
	}
	if !long(t) {
		t.Parallel()
	}
}

// hubctl builds the binary under test once per run, as `go build` would
// for a user: the suite kills it, so it must be a process of its own.
func hubctl(t *testing.T) string {
	t.Helper()
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "hubctl-chaos-bin-")
		if build.err != nil {
			return
		}
		build.bin = filepath.Join(build.dir, "hubctl")
		// go test puts its own go command first on PATH.
		cmd := exec.Command("go", "build", "-o", build.bin, "github.com/hubctl/hubctl/cmd/hubctl")
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.bin
}

// sharedPostgres is the package's cluster; scenarios get a database each.
func sharedPostgres(t *testing.T) *devenv.Postgres {
	t.Helper()
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// Nothing crashes this cluster, so durability can go.
		shared.pg, shared.err = devenv.StartPostgres(ctx, devenv.PostgresOptions{Ephemeral: true})
	})
	if shared.err != nil {
		t.Fatalf("start PostgreSQL: %v", shared.err)
	}
	return shared.pg
}

// privatePostgres is a durable cluster of one test's own, in a directory
// the postgres OS user can reach, so that it can be crashed and restarted
// on the same port.
func privatePostgres(t *testing.T) (*devenv.Postgres, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "hubctl-chaos-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(dir, "data")
	pg, err := devenv.StartPostgres(t.Context(), devenv.PostgresOptions{DataDir: dataDir})
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	return pg, dataDir
}
