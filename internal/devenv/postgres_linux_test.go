package devenv

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestPostgresStartQueryStop(t *testing.T) {
	t.Parallel()
	pg := startTestPostgres(t, PostgresOptions{Ephemeral: true})

	wantPrefix := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/hubctl", pg.Port())
	if !strings.HasPrefix(pg.DSN(), wantPrefix) {
		t.Errorf("DSN() = %q, want prefix %q", pg.DSN(), wantPrefix)
	}
	if pg.Port() == 5432 {
		t.Errorf("picked port 5432, which belongs to a system server")
	}
	assertQueryAnswers(t, pg.DSN())
	if psql := findPsql(t); psql != "" {
		out, err := exec.CommandContext(t.Context(), psql, pg.DSN(), "-XtAc", "select current_database()").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "hubctl" {
			t.Errorf("psql through the DSN: %v, output %q", err, out)
		}
	}

	postmaster := pg.proc.Pid()
	children := childrenOf(t, postmaster)
	if len(children) == 0 {
		t.Fatalf("postmaster %d has no children; want its checkpointer and other auxiliary processes", postmaster)
	}

	if err := pg.Stop(t.Context()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := pg.Stop(t.Context()); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	select {
	case <-pg.Done():
	default:
		t.Error("Done not closed after Stop")
	}
	if alive := alivePIDs(append(children, postmaster)); len(alive) > 0 {
		t.Errorf("processes %v of the server (postmaster %d) outlived Stop", alive, postmaster)
	}
	if _, err := os.Stat(pg.runDir); !os.IsNotExist(err) {
		t.Errorf("runtime directory %s (holding the temporary cluster) not removed: %v", pg.runDir, err)
	}
}

// helperEnv makes the test binary act as a parent that starts PostgreSQL
// and waits to be killed.
const helperEnv = "DEVENV_TEST_START_POSTGRES_AND_WAIT"

func TestPostgresDiesWithParent(t *testing.T) {
	if os.Getenv(helperEnv) == "1" {
		startPostgresAndWait()
		return
	}
	t.Parallel()
	if _, err := findBinDir(t.Context(), ""); err != nil && os.Getenv("CI") != "true" {
		t.Skip(err)
	}

	parent := exec.Command(os.Args[0], "-test.run=^TestPostgresDiesWithParent$", "-test.count=1")
	parent.Env = append(os.Environ(), helperEnv+"=1")
	var stderr bytes.Buffer
	parent.Stderr = &stderr
	stdout, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = parent.Process.Kill()
		_ = parent.Wait()
	})

	postmaster, runDir := readStartedServer(t, stdout)
	t.Cleanup(func() { _ = os.RemoveAll(runDir) }) // its owner dies without cleaning up
	server := append(childrenOf(t, postmaster), postmaster)
	if len(server) < 2 {
		t.Fatalf("postmaster %d is not running with its children; helper stderr:\n%s", postmaster, stderr.String())
	}

	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()

	deadline := time.Now().Add(10 * time.Second)
	for alive := alivePIDs(server); len(alive) > 0; alive = alivePIDs(server) {
		if time.Now().After(deadline) {
			t.Fatalf("server processes %v (postmaster %d) still running 10s after their parent was killed", alive, postmaster)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startPostgresAndWait is the helper process: it reports the server it
// started on stdout and then waits for the test to kill it.
func startPostgresAndWait() {
	pg, err := StartPostgres(context.Background(), PostgresOptions{Ephemeral: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "StartPostgres:", err)
		os.Exit(2)
	}
	fmt.Printf("postmaster %d %s\n", pg.proc.Pid(), pg.runDir)
	time.Sleep(2 * time.Minute)
	os.Exit(3) // not reached: the test kills us well before
}

func readStartedServer(t *testing.T, stdout interface{ Read([]byte) (int, error) }) (pid int, runDir string) {
	t.Helper()
	type result struct {
		pid    int
		runDir string
		err    error
	}
	found := make(chan result, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			var r result
			if _, err := fmt.Sscanf(scanner.Text(), "postmaster %d %s", &r.pid, &r.runDir); err == nil {
				found <- r
				return
			}
		}
		found <- result{err: fmt.Errorf("helper ended without starting a server (%v)", scanner.Err())}
	}()
	select {
	case r := <-found:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.pid, r.runDir
	case <-time.After(time.Minute):
		t.Fatal("helper did not start a server within a minute")
		return 0, ""
	}
}

func assertQueryAnswers(t *testing.T, dsn string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatalf("connect to %s: %v", dsn, err)
	}
	defer conn.Close(context.Background())
	var one int
	if err := conn.QueryRow(t.Context(), "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("select 1 = %d, %v", one, err)
	}
}

// findPsql returns psql from the server's bin directory or PATH, or "" when
// there is none (psql is a separate package on some systems).
func findPsql(t *testing.T) string {
	t.Helper()
	if binDir, err := findBinDir(t.Context(), ""); err == nil {
		if p := filepath.Join(binDir, "psql"); hasExecutable(p) {
			return p
		}
	}
	p, _ := exec.LookPath("psql")
	return p
}

func hasExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// alivePIDs returns those of pids that still run. A zombie waiting for a
// reaper that may never come (PID 1 in many containers) counts as gone. A
// pid reused meanwhile would count as alive: a false failure, never a false
// pass.
func alivePIDs(pids []int) []int {
	var alive []int
	for _, pid := range pids {
		if st, ok := procStat(pid); ok && st.state != 'Z' {
			alive = append(alive, pid)
		}
	}
	return alive
}

// childrenOf lists the processes whose parent is pid. PostgreSQL puts each
// child in a process group of its own, so the group of the postmaster does
// not find them.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var children []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := procStat(child); ok && st.ppid == pid {
			children = append(children, child)
		}
	}
	return children
}

type processStat struct {
	state byte
	ppid  int
}

// procStat reads a process's state and parent from /proc. The command name
// may hold spaces and parentheses, so fields are counted from its closing
// parenthesis.
func procStat(pid int) (processStat, bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return processStat{}, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return processStat{}, false
	}
	fields := strings.Fields(string(data[i+1:])) // state ppid pgrp ...
	if len(fields) < 2 || len(fields[0]) != 1 {
		return processStat{}, false
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return processStat{}, false
	}
	return processStat{state: fields[0][0], ppid: ppid}, true
}
