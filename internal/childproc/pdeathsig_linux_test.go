package childproc

import (
	"errors"
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
	// The runtime ends a locked goroutine's thread when it returns, except
	// the process's main thread, which it keeps: forking from it would
	// leave the child to outlive the test. Try again on another thread.
	for forked := false; !forked; {
		started := make(chan error, 1)
		go func() {
			runtime.LockOSThread()
			if syscall.Gettid() == syscall.Getpid() {
				runtime.UnlockOSThread()
				started <- errMainThread
				return
			}
			started <- cmd.Start() // never unlocked: the thread ends with the goroutine
		}()
		switch err := <-started; {
		case errors.Is(err, errMainThread):
		case err != nil:
			t.Fatal(err)
		default:
			forked = true
		}
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

// errMainThread says a goroutine meant to fork from a thread that ends
// ran on the main thread, which never does.
var errMainThread = errors.New("on the main thread")
