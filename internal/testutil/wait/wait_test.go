package wait

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a testing.TB that records a failure instead of ending the
// test, so that Until's failures can be checked.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(r)
}

// run calls Until and returns the failure it reported, or "".
func run(p Poll, cond func() bool) (failed string) {
	r := &recorder{}
	defer func() {
		if v := recover(); v != nil {
			if v != any(r) {
				panic(v)
			}
			failed = r.failed
		}
	}()
	p.Until(r, "the condition", cond)
	return ""
}

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	var looks atomic.Int32
	failed := run(Poll{Patience: time.Minute, Interval: time.Millisecond}, func() bool { return looks.Add(1) == 3 })
	if failed != "" || looks.Load() != 3 {
		t.Fatalf("failed %q after %d looks, want success at the third", failed, looks.Load())
	}
}

func TestUntilFailsWhenPatienceRunsOutWithTheExplanation(t *testing.T) {
	failed := run(Poll{Patience: 20 * time.Millisecond, Explain: func() string { return "the log says why" }}, func() bool { return false })
	if !strings.Contains(failed, "the condition") || !strings.Contains(failed, "the log says why") {
		t.Fatalf("failure %q names neither the condition nor the explanation", failed)
	}
}

func TestUntilFailsAtOnceWhenAborted(t *testing.T) {
	start := time.Now()
	failed := run(Poll{Patience: time.Hour, Abort: func() string { return "the process exited" }}, func() bool { return false })
	if !strings.Contains(failed, "the process exited") {
		t.Fatalf("failure %q does not give the abort's reason", failed)
	}
	if took := time.Since(start); took > time.Minute {
		t.Fatalf("an aborted wait took %v", took)
	}
}
