package devenv

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPostgresOnABusyPortTouchesNothing: a second cluster asked to listen
// where a first one does fails with the port named, and never reaches the
// first cluster's databases; a server found on the port is checked to be
// the cluster we started before anything is written to it.
func TestPostgresOnABusyPortTouchesNothing(t *testing.T) {
	t.Parallel()
	first := startTestPostgres(t, PostgresOptions{DataDir: filepath.Join(reachableTempDir(t), "first"), Ephemeral: true})
	execSQL(t, first.DSN(), "CREATE TABLE marker (v text)")

	_, err := StartPostgres(t.Context(), PostgresOptions{DataDir: filepath.Join(reachableTempDir(t), "second"), Port: first.Port(), Ephemeral: true})
	var busy *PortInUseError
	if !errors.As(err, &busy) || busy.Port != first.Port() || busy.Service != "PostgreSQL" {
		t.Fatalf("StartPostgres on a busy port: %v, want a PortInUseError for %d", err, first.Port())
	}

	conn, err := pgx.Connect(t.Context(), first.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	if err := verifyIdentity(t.Context(), conn, filepath.Join(reachableTempDir(t), "second")); !errors.Is(err, errNotOurServer) {
		t.Fatalf("verifyIdentity against another cluster: %v, want errNotOurServer", err)
	}
	if err := verifyIdentity(t.Context(), conn, first.DataDir()); err != nil {
		t.Fatalf("verifyIdentity against our own cluster: %v", err)
	}
}

func TestKafkaOnABusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = StartKafka(KafkaOptions{Port: port})
	var busy *PortInUseError
	if !errors.As(err, &busy) || busy.Port != port || busy.Service != "Kafka" {
		t.Fatalf("StartKafka on a busy port: %v, want a PortInUseError for %d", err, port)
	}
}

// TestWaitReadyIgnoresAnotherClustersServer: when our server loses the port
// to another one after the free-port check, the other server's answer does
// not make ours ready; our server's bind failure ends the wait.
func TestWaitReadyIgnoresAnotherClustersServer(t *testing.T) {
	t.Parallel()
	first := startTestPostgres(t, PostgresOptions{Ephemeral: true})
	binDir, err := findBinDir(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	u, err := serverUser()
	if err != nil {
		t.Fatal(err)
	}
	runDir, err := makeRunDir(u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(runDir) })
	dataDir := filepath.Join(runDir, "data")
	if err := ensureCluster(t.Context(), binDir, dataDir, u, true); err != nil {
		t.Fatal(err)
	}
	serverLog := newTailBuffer(logTailBytes)
	proc, err := launchServer(binDir, dataDir, runDir, first.Port(), u, PostgresOptions{Ephemeral: true}, serverLog)
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Stop(nil, shutdownSteps...)
	err = waitReady(t.Context(), proc, first.DSNFor("postgres"), dataDir, 30*time.Second)
	if err == nil {
		t.Fatal("waitReady accepted the other cluster's server as ours")
	}
	<-proc.Done()
	if tail := serverLog.lastLines(logTailLines); !isBindFailure(tail) {
		t.Fatalf("our server did not fail to bind (%v):\n%s", err, tail)
	}
}

// TestStopImmediateThenRestart: a crashed cluster comes back on the same
// port with what was committed before the crash. Not Ephemeral: without
// synchronous commits a crash loses the last commits, as it should.
func TestStopImmediateThenRestart(t *testing.T) {
	t.Parallel()
	dataDir := filepath.Join(reachableTempDir(t), "pg")
	first := startTestPostgres(t, PostgresOptions{DataDir: dataDir})
	execSQL(t, first.DSN(), "CREATE TABLE kept (v text)", "INSERT INTO kept VALUES ('before crash')")
	if err := first.StopImmediate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := pgx.Connect(t.Context(), first.DSN()); err == nil {
		t.Fatal("the server still answers after StopImmediate")
	}
	second := startTestPostgres(t, PostgresOptions{DataDir: dataDir, Port: first.Port()})
	assertRows(t, second.DSN(), "before crash")
}
