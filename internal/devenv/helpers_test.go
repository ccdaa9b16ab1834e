package devenv

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
)

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	// true(1) starts far faster than re-running this (race-built) binary.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if path, err := exec.LookPath("true"); err == nil {
		cmd = exec.Command(path)
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("run a short-lived process: %v", err)
	}
	return cmd.Process.Pid
}

// startTestPostgres starts a server for a test and stops it at cleanup. A
// machine without PostgreSQL skips the test, except in CI.
func startTestPostgres(t *testing.T, opts PostgresOptions) *Postgres {
	t.Helper()
	pg, err := StartPostgres(t.Context(), opts)
	if errors.Is(err, errBinariesNotFound) && os.Getenv("CI") != "true" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatalf("StartPostgres: %v", err)
	}
	t.Cleanup(func() {
		// Not t.Context(): it is canceled before cleanups run, which would
		// turn the clean shutdown into a kill.
		if err := pg.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return pg
}
