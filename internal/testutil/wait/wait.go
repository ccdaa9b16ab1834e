// Package wait polls a condition of a test until it holds, failing the test
// when patience runs out, so that a test waits for what it needs instead of
// sleeping for a time that is too short on a busy machine.
package wait

import (
	"testing"
	"time"
)

// defaultInterval is fine enough for most conditions and coarse enough
// not to load a database the condition queries.
const defaultInterval = 10 * time.Millisecond

// Poll is how one test waits.
type Poll struct {
	// Patience is how long the condition may take before the test fails.
	Patience time.Duration
	// Interval is the time between looks; defaultInterval when zero.
	Interval time.Duration
	// Abort, when set, is asked at every look; a non-empty answer fails
	// the test at once, as when the process the test waits on has exited.
	Abort func() string
	// Explain, when set, adds what it returns to the failure when
	// patience runs out, such as the log of the process waited on.
	Explain func() string
}

// Until looks at cond until it holds. what names the condition in the
// failure message.
func (p Poll) Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	interval := p.Interval
	if interval == 0 {
		interval = defaultInterval
	}
	deadline := time.Now().Add(p.Patience)
	for !cond() {
		if p.Abort != nil {
			if reason := p.Abort(); reason != "" {
				t.Fatalf("waiting for %s: %s", what, reason)
			}
		}
		if time.Now().After(deadline) {
			if p.Explain != nil {
				t.Fatalf("no %s within %v; %s", what, p.Patience, p.Explain())
			}
			t.Fatalf("no %s within %v", what, p.Patience)
		}
		time.Sleep(interval)
	}
}
