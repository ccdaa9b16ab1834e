package dev

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/testutil/syncbuf"
)

// TestMakeDevExitsCleanlyOnCtrlC runs `make dev` with a stand-in for
// hubctl that stops cleanly on SIGINT, sends Ctrl-C to the whole process
// group as a terminal does, and expects make to report nothing of its
// own: no "Error 1" (what `go run` in between made of a clean stop) and no
// "Interrupt" (a child killed by the signal). make itself then ends by the
// signal, as every program stopped with Ctrl-C does.
func TestMakeDevExitsCleanlyOnCtrlC(t *testing.T) {
	makePath, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not installed")
	}
	fake := filepath.Join(t.TempDir(), "hubctl")
	// Like hubctl dev, which stops its database and broker first, the
	// stand-in takes a moment to stop: one that exits the instant Ctrl-C
	// lands races make's own signal handler, which then finds its child
	// already reaped and fails with "wait: No child processes".
	script := "#!/bin/sh\ntrap 'echo stopped; sleep 0.5; exit 0' INT\necho ready\nwhile :; do sleep 0.05; done\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var out syncbuf.Buffer
	// GO=true turns the build step into a no-op.
	cmd := exec.Command(makePath, "--no-print-directory", "dev", "GO=true", "DEV_HUBCTL="+fake)
	cmd.Dir = "../../.."
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), "ready") {
		if time.Now().After(deadline) {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("the stand-in never started:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if exitErr, ok := err.(*exec.ExitError); ok {
		if status, ok := exitErr.Sys().(syscall.WaitStatus); ok && status.Signaled() && status.Signal() == syscall.SIGINT {
			err = nil
		}
	}
	text := out.String()
	if err != nil || strings.Contains(text, "Error") || strings.Contains(text, "Interrupt") || !strings.Contains(text, "stopped") {
		t.Fatalf("make dev after Ctrl-C: %v\n%s", err, text)
	}
}
