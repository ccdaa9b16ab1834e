package childproc

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// endThreads ends n OS threads of this process: the runtime ends the
// thread of a goroutine that returns while locked to it. Which threads it
// ends is the scheduler's choice, as it is in a test binary whose parallel
// tests start and reap children of their own.
func endThreads(n int) {
	for range n {
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(done)
		}()
		<-done
	}
}

// TestAChildWithAParentDeathSignalOutlivesTheThreadsItsParentEnds is the
// reason Start locks its goroutine: the chaos suite once lost a hub it had
// started with Pdeathsig when a parallel test's initdb, reaped on the
// thread that had forked the hub, took that thread down.
func TestAChildWithAParentDeathSignalOutlivesTheThreadsItsParentEnds(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	proc := start(t, cmd)
	endThreads(200)
	select {
	case <-proc.Done():
		t.Fatalf("the child died when threads of its parent ended: %v", proc.Err())
	case <-time.After(200 * time.Millisecond):
	}
}

// TestTheParentDeathSignalFollowsTheForkingThread shows the kernel
// behaviour the test above guards against, so that it cannot pass for want
// of it: a child forked from a thread that then ends gets the signal while
// this process lives on.
func TestTheParentDeathSignalFollowsTheForkingThread(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		started <- cmd.Start()
	}()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if sig := exitSignal(t, err); sig != syscall.SIGKILL {
			t.Fatalf("child ended by %v, want SIGKILL", sig)
		}
	case <-time.After(patience):
		_ = cmd.Process.Kill()
		t.Fatal("the child outlived the thread that forked it")
	}
}
