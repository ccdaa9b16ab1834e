//go:build unix

package childproc

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// patience bounds how long a test lets a process react to a signal it
// heeds; it only ever ends a wait early on a badly loaded machine.
const patience = time.Minute

func TestStopEndsAProcessGentlyWithItsFirstSignal(t *testing.T) {
	proc := start(t, exec.Command("sleep", "60"))
	if proc.Exited() {
		t.Fatal("Exited reports a running process as ended")
	}
	if err := proc.Err(); err != nil {
		t.Fatalf("Err of a running process = %v, want nil", err)
	}

	if gentle := proc.Stop(nil, Step{Signal: syscall.SIGTERM, Grace: patience}); !gentle {
		t.Fatal("Stop reports sleep as not ended by SIGTERM")
	}
	if !proc.Exited() {
		t.Fatal("Exited reports a stopped process as running")
	}
	assertDone(t, proc)
	if sig := exitSignal(t, proc.Err()); sig != syscall.SIGTERM {
		t.Fatalf("process ended by %v, want SIGTERM", sig)
	}
}

func TestStopEscalatesPastAnIgnoredSignal(t *testing.T) {
	cancelled := make(chan struct{})
	close(cancelled)
	ignored := Step{Signal: syscall.SIGTERM, Grace: 50 * time.Millisecond}
	tests := []struct {
		name   string
		cancel <-chan struct{}
		steps  []Step
		want   syscall.Signal
	}{
		{"killed after the last step", nil, []Step{ignored}, syscall.SIGKILL},
		{"ended by the next step", nil, []Step{ignored, {Signal: syscall.SIGINT, Grace: patience}}, syscall.SIGINT},
		// Were the cancel not heeded, the hour's grace would run into the
		// test's timeout.
		{"killed at once when cancelled", cancelled, []Step{{Signal: syscall.SIGTERM, Grace: time.Hour}}, syscall.SIGKILL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proc := startIgnoringTERM(t)
			if gentle := proc.Stop(tt.cancel, tt.steps...); gentle {
				t.Fatal("Stop reports a process ignoring SIGTERM as ended by it")
			}
			assertDone(t, proc)
			if sig := exitSignal(t, proc.Err()); sig != tt.want {
				t.Fatalf("process ended by %v, want %v", sig, tt.want)
			}
		})
	}
}

func TestAProcessThatExitsOnItsOwn(t *testing.T) {
	tests := []struct {
		name    string
		command string
		code    int
	}{
		{"success", "true", 0},
		{"failure", "false", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			proc := start(t, exec.Command(tt.command))
			assertDone(t, proc)
			if !proc.Exited() {
				t.Fatal("Exited reports an ended process as running")
			}
			err := proc.Err()
			var exitErr *exec.ExitError
			switch {
			case tt.code == 0 && err != nil:
				t.Fatalf("Err = %v, want nil", err)
			case tt.code != 0 && !errors.As(err, &exitErr):
				t.Fatalf("Err = %v, want an *exec.ExitError", err)
			case tt.code != 0 && exitErr.ExitCode() != tt.code:
				t.Fatalf("exit code = %d, want %d", exitErr.ExitCode(), tt.code)
			}
			// It ended before any step was taken, which counts as gentle.
			if gentle := proc.Stop(nil, Step{Signal: syscall.SIGTERM, Grace: patience}); !gentle {
				t.Fatal("Stop reports an already ended process as stopped forcibly")
			}
		})
	}
}

func TestStartReportsACommandThatCannotStart(t *testing.T) {
	proc, err := Start(exec.Command(t.TempDir() + "/missing"))
	if err == nil {
		proc.Stop(nil)
		t.Fatal("Start of a missing program succeeded")
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Start error = %v, want one wrapping os.ErrNotExist", err)
	}
}

// start starts cmd and kills it, should the test leave it running.
func start(t *testing.T, cmd *exec.Cmd) *Process {
	t.Helper()
	proc, err := Start(cmd)
	if err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	t.Cleanup(func() { proc.Stop(nil) })
	return proc
}

// startIgnoringTERM starts a process that ignores SIGTERM and dies of any
// other signal, and returns once it has begun ignoring it.
func startIgnoringTERM(t *testing.T) *Process {
	t.Helper()
	ready, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer ready.Close()
	// An ignored signal stays ignored across exec, so sleep inherits it.
	cmd := exec.Command("sh", "-c", `trap "" TERM; echo ready; exec sleep 60`)
	cmd.Stdout = w
	proc := start(t, cmd)
	w.Close()
	line, err := bufio.NewReader(ready).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("the process did not say it was ready: %q, %v", line, err)
	}
	return proc
}

func assertDone(t *testing.T, proc *Process) {
	t.Helper()
	select {
	case <-proc.Done():
	case <-time.After(patience):
		t.Fatal("Done was not closed after the process ended")
	}
}

// exitSignal is the signal that ended the process whose Wait returned err.
func exitSignal(t *testing.T, err error) syscall.Signal {
	t.Helper()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		t.Fatalf("Err = %v, want an *exec.ExitError", err)
	}
	status, ok := exitErr.Sys().(syscall.WaitStatus)
	if !ok || !status.Signaled() {
		t.Fatalf("process was not ended by a signal: %v", err)
	}
	return status.Signal()
}
