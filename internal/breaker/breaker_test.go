package breaker

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	testFailures = 3
	testCooldown = 30 * time.Second
	dest         = "acme|https://hooks.example.com:443"
)

type action int

const (
	allow   action = iota // ask; store the permit under step.permit
	succeed               // report step.permit as a success
	fail                  // report step.permit as a failure
	release               // hand step.permit back without an outcome
)

// step is one call on one breaker at t0+at.
type step struct {
	at          time.Duration
	action      action
	permit      string
	wantOK      bool          // allow only
	wantRetryAt time.Duration // allow only, when shed: offset from t0
	want        State         // state after the step
}

// closedFailures makes n attempts at t0 and fails them, leaving the breaker
// closed (n < testFailures) or open from t0 (n = testFailures).
func closedFailures(n int) []step {
	var steps []step
	for i := range n {
		steps = append(steps, step{action: allow, permit: fmt.Sprint("c", i), wantOK: true})
	}
	for i := range n {
		want := Closed
		if i+1 >= testFailures {
			want = Open
		}
		steps = append(steps, step{action: fail, permit: fmt.Sprint("c", i), want: want})
	}
	return steps
}

func TestStateMachine(t *testing.T) {
	opened := closedFailures(testFailures) // open from t0, cool-down ends at 30s
	tests := []struct {
		name  string
		steps []step
	}{
		{"fewer failures than the threshold stay closed", closedFailures(testFailures - 1)},
		{"threshold of consecutive failures opens", opened},
		{"success resets the count", append(closedFailures(testFailures-1), []step{
			{action: allow, permit: "s", wantOK: true},
			{action: succeed, permit: "s"},
			{action: allow, permit: "f1", wantOK: true},
			{action: allow, permit: "f2", wantOK: true},
			{action: fail, permit: "f1"},
			{action: fail, permit: "f2"},
		}...)},
		{"open sheds until the cool-down ends", append(opened, []step{
			{at: time.Second, action: allow, wantRetryAt: testCooldown, want: Open},
			{at: testCooldown - time.Nanosecond, action: allow, wantRetryAt: testCooldown, want: Open},
		}...)},
		{"probe at the exact end of the cool-down; success closes", append(opened, []step{
			{at: testCooldown, action: allow, permit: "p", wantOK: true, want: HalfOpen},
			{at: 31 * time.Second, action: succeed, permit: "p"},
			{at: 32 * time.Second, action: allow, permit: "next", wantOK: true},
		}...)},
		{"one probe only; the others are shed until it would be given up", append(opened, []step{
			{at: 40 * time.Second, action: allow, permit: "p", wantOK: true, want: HalfOpen},
			{at: 41 * time.Second, action: allow, wantRetryAt: 70 * time.Second, want: HalfOpen},
			{at: 69 * time.Second, action: allow, wantRetryAt: 70 * time.Second, want: HalfOpen},
		}...)},
		{"probe failure re-opens with a fresh cool-down", append(opened, []step{
			{at: 40 * time.Second, action: allow, permit: "p", wantOK: true, want: HalfOpen},
			{at: 45 * time.Second, action: fail, permit: "p", want: Open},
			{at: 46 * time.Second, action: allow, wantRetryAt: 75 * time.Second, want: Open},
			{at: 75 * time.Second, action: allow, permit: "p2", wantOK: true, want: HalfOpen},
		}...)},
		{"lost probe: a new one after another cool-down, the old report is stale", append(opened, []step{
			{at: 40 * time.Second, action: allow, permit: "lost", wantOK: true, want: HalfOpen},
			{at: 70 * time.Second, action: allow, permit: "p2", wantOK: true, want: HalfOpen},
			{at: 71 * time.Second, action: succeed, permit: "lost", want: HalfOpen},
			{at: 72 * time.Second, action: allow, wantRetryAt: 100 * time.Second, want: HalfOpen},
			{at: 73 * time.Second, action: fail, permit: "p2", want: Open},
		}...)},
		{"late reports from before opening neither close nor extend the cool-down", []step{
			{action: allow, permit: "a", wantOK: true},
			{action: allow, permit: "b", wantOK: true},
			{action: allow, permit: "c", wantOK: true},
			{action: allow, permit: "slow", wantOK: true},
			{action: fail, permit: "a"},
			{action: fail, permit: "b"},
			{action: fail, permit: "c", want: Open},
			{at: 10 * time.Second, action: succeed, permit: "slow", want: Open},
			{at: 20 * time.Second, action: fail, permit: "slow", want: Open},
			{at: 21 * time.Second, action: allow, wantRetryAt: testCooldown, want: Open},
		}},
		{"reports from a closed phase before a re-close are stale", append(closedFailures(testFailures), []step{
			{at: testCooldown, action: allow, permit: "p", wantOK: true, want: HalfOpen},
			{at: testCooldown, action: succeed, permit: "p"},
			// c0–c2 were granted in the first closed phase; they no longer count.
			{at: testCooldown, action: fail, permit: "c0"},
			{at: testCooldown, action: fail, permit: "c1"},
			{at: testCooldown, action: fail, permit: "c2"},
			{at: testCooldown, action: fail, permit: "p"},
		}...)},
		{"released permits count no failure", append(closedFailures(testFailures-1), []step{
			{action: allow, permit: "r1", wantOK: true},
			{action: allow, permit: "r2", wantOK: true},
			{action: release, permit: "r1"},
			{action: release, permit: "r2"},
			{action: allow, permit: "f", wantOK: true},
			{action: fail, permit: "f", want: Open},
		}...)},
		{"a released probe frees the slot for the next caller at once", append(opened, []step{
			{at: 40 * time.Second, action: allow, permit: "p", wantOK: true, want: HalfOpen},
			{at: 41 * time.Second, action: release, permit: "p", want: HalfOpen},
			{at: 41 * time.Second, action: allow, permit: "p2", wantOK: true, want: HalfOpen},
			{at: 42 * time.Second, action: allow, wantRetryAt: 71 * time.Second, want: HalfOpen},
			{at: 43 * time.Second, action: succeed, permit: "p2", want: Closed},
		}...)},
		{"the zero Permit is ignored", []step{
			{action: fail, permit: "never granted"},
			{action: fail, permit: "never granted"},
			{action: fail, permit: "never granted"},
			{action: allow, permit: "a", wantOK: true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Config{Failures: testFailures, Cooldown: testCooldown})
			permits := map[string]Permit{}
			for i, st := range tt.steps {
				now := t0.Add(st.at)
				switch st.action {
				case allow:
					p, retryAt, ok := s.Allow(dest, now)
					if ok != st.wantOK {
						t.Fatalf("step %d: Allow ok = %v, want %v", i, ok, st.wantOK)
					}
					if want := t0.Add(st.wantRetryAt); !ok && !retryAt.Equal(want) {
						t.Fatalf("step %d: Allow retryAt = +%v, want +%v", i, retryAt.Sub(t0), st.wantRetryAt)
					}
					if ok && !retryAt.IsZero() {
						t.Fatalf("step %d: granted with retryAt %v", i, retryAt)
					}
					permits[st.permit] = p
				case succeed, fail:
					s.Report(permits[st.permit], st.action == succeed, now)
				case release:
					s.Release(permits[st.permit], now)
				}
				if got := s.State(dest); got != st.want {
					t.Fatalf("step %d: state = %v, want %v", i, got, st.want)
				}
			}
		})
	}
}

func TestTransitionsAndOpenCount(t *testing.T) {
	var got []Transition
	var s *Set
	s = New(Config{Failures: 1, Cooldown: testCooldown, OnTransition: func(tr Transition) {
		got = append(got, tr)
		s.OpenCount() // deadlocks if callbacks ran under the Set's lock
	}})

	counts := []int{s.OpenCount()}
	p, _, _ := s.Allow("a", t0)
	s.Report(p, false, t0)
	counts = append(counts, s.OpenCount())
	p, _, _ = s.Allow("a", t0.Add(testCooldown))
	counts = append(counts, s.OpenCount())
	s.Report(p, true, t0.Add(testCooldown+time.Second))
	counts = append(counts, s.OpenCount())

	want := []Transition{
		{Key: "a", From: Closed, To: Open, At: t0},
		{Key: "a", From: Open, To: HalfOpen, At: t0.Add(testCooldown)},
		{Key: "a", From: HalfOpen, To: Closed, At: t0.Add(testCooldown + time.Second)},
	}
	if !slices.Equal(got, want) {
		t.Errorf("transitions = %+v, want %+v", got, want)
	}
	if wantCounts := []int{0, 1, 1, 0}; !slices.Equal(counts, wantCounts) {
		t.Errorf("OpenCount along the way = %v, want %v", counts, wantCounts)
	}
}

func TestDefaults(t *testing.T) {
	s := New(Config{Failures: -1, Cooldown: -time.Second})
	for i := range DefaultFailures {
		if got := s.State(dest); got != Closed {
			t.Fatalf("state after %d failures = %v, want closed", i, got)
		}
		p, _, _ := s.Allow(dest, t0)
		s.Report(p, false, t0)
	}
	_, retryAt, ok := s.Allow(dest, t0)
	if ok || !retryAt.Equal(t0.Add(DefaultCooldown)) {
		t.Errorf("after %d failures Allow = (%v, %v), want shed until +%v", DefaultFailures, retryAt, ok, DefaultCooldown)
	}
}

func TestKeysAreIndependent(t *testing.T) {
	s := New(Config{Failures: 1, Cooldown: testCooldown})
	p, _, _ := s.Allow("acme|dead", t0)
	s.Report(p, false, t0)
	if _, _, ok := s.Allow("acme|alive", t0); !ok {
		t.Error("another destination was shed")
	}
	if _, _, ok := s.Allow("globex|dead", t0); !ok {
		t.Error("another tenant's breaker for the same destination was shed")
	}
}

func TestIdleBreakersAreForgotten(t *testing.T) {
	const idle = time.Hour
	var forgotten []Transition
	s := New(Config{Failures: 2, Cooldown: testCooldown, IdleTimeout: idle, OnTransition: func(tr Transition) {
		if tr.To == Closed {
			forgotten = append(forgotten, tr)
		}
	}})
	for i := range 1000 {
		p, _, _ := s.Allow(fmt.Sprint("healthy-", i), t0)
		s.Report(p, true, t0)
	}
	fail := func(key string, at time.Time) {
		p, _, _ := s.Allow(key, at)
		s.Report(p, false, at)
	}
	fail("one-failure", t0)
	fail("dead", t0)
	fail("dead", t0) // open
	fail("busy", t0)
	fail("busy", t0) // open, but still asked about below

	// Activity within the idle timeout keeps a breaker; this call is its probe.
	s.Allow("busy", t0.Add(50*time.Minute))

	// A sweep runs at the first call at least IdleTimeout/2 after the last.
	later := t0.Add(idle + 40*time.Minute)
	s.Allow("unrelated", later)

	if got, want := len(s.breakers), 2; got != want {
		t.Errorf("%d breakers remembered, want %d (busy, unrelated)", got, want)
	}
	if got := s.State("busy"); got != HalfOpen {
		t.Errorf("busy breaker = %v, want half-open", got)
	}
	if got := s.OpenCount(); got != 1 {
		t.Errorf("OpenCount = %d, want 1", got)
	}
	if want := []Transition{{Key: "dead", From: Open, To: Closed, At: later}}; !slices.Equal(forgotten, want) {
		t.Errorf("transitions to closed = %+v, want %+v", forgotten, want)
	}
	// The forgotten failure no longer counts: one more failure does not open.
	fail("one-failure", later)
	if got := s.State("one-failure"); got != Closed {
		t.Errorf("one-failure = %v after its first counted failure, want closed", got)
	}
}

// TestForgetDropsChosenBreakers: forgetting open, half-open and closed
// breakers takes them out of the count and the snapshot, reports the ones
// not closed as closing, and makes their permits stale; the others stay.
func TestForgetDropsChosenBreakers(t *testing.T) {
	var closed []Transition
	s := New(Config{Failures: 1, Cooldown: testCooldown, OnTransition: func(tr Transition) {
		if tr.To == Closed {
			closed = append(closed, tr)
		}
	}})
	fail := func(key string) {
		p, _, _ := s.Allow(key, t0)
		s.Report(p, false, t0)
	}
	fail("acme|open")
	fail("acme|probing")
	probe, _, _ := s.Allow("acme|probing", t0.Add(testCooldown)) // half-open
	healthy, _, _ := s.Allow("acme|healthy", t0)
	fail("globex|open")

	at := t0.Add(time.Minute)
	n := s.Forget(func(key string) bool { return strings.HasPrefix(key, "acme|") }, at)
	if n != 3 {
		t.Errorf("Forget dropped %d breakers, want 3", n)
	}
	if got := s.OpenCount(); got != 1 {
		t.Errorf("OpenCount = %d after forgetting, want 1 (globex's)", got)
	}
	if snap := s.Snapshot(); len(snap) != 1 || snap[0].Key != "globex|open" {
		t.Errorf("Snapshot = %+v, want only globex|open", snap)
	}
	slices.SortFunc(closed, func(a, b Transition) int { return strings.Compare(a.Key, b.Key) })
	want := []Transition{
		{Key: "acme|open", From: Open, To: Closed, At: at},
		{Key: "acme|probing", From: HalfOpen, To: Closed, At: at},
	}
	if !slices.Equal(closed, want) {
		t.Errorf("transitions to closed = %+v, want %+v", closed, want)
	}
	// Reports under permits of forgotten breakers change nothing.
	s.Report(probe, false, at)
	s.Report(healthy, false, at)
	for _, key := range []string{"acme|probing", "acme|healthy"} {
		if got := s.State(key); got != Closed {
			t.Errorf("%s = %v after a stale report, want closed", key, got)
		}
	}
	if got := s.OpenCount(); got != 1 {
		t.Errorf("OpenCount = %d after stale reports, want 1", got)
	}
}

// TestOneProbeUnderConcurrency races many workers for the probe slot of a
// breaker whose cool-down has just ended; run with -race.
func TestOneProbeUnderConcurrency(t *testing.T) {
	const workers, rounds = 32, 50
	s := New(Config{Failures: 1, Cooldown: testCooldown})
	p, _, _ := s.Allow(dest, t0)
	s.Report(p, false, t0)

	now := t0
	for round := range rounds {
		now = now.Add(testCooldown)
		var granted atomic.Int32
		var probe Permit
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				if p, _, ok := s.Allow(dest, now); ok {
					granted.Add(1)
					probe = p
				}
				s.OpenCount()
			})
		}
		wg.Wait()
		if got := granted.Load(); got != 1 {
			t.Fatalf("round %d: %d probes granted, want exactly 1", round, got)
		}
		s.Report(probe, false, now) // re-open for the next round
	}
}

// TestConcurrentUse mixes every operation on a few keys so -race can see them.
func TestConcurrentUse(t *testing.T) {
	s := New(Config{Failures: 2, Cooldown: time.Millisecond, IdleTimeout: time.Second, OnTransition: func(Transition) {}})
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := range 2000 {
				key := fmt.Sprint("k", (w+i)%5)
				now := t0.Add(time.Duration(i) * time.Millisecond)
				if p, _, ok := s.Allow(key, now); ok {
					s.Report(p, i%3 == 0, now)
				}
				if s.OpenCount() < 0 || s.OpenCount() > 5 {
					t.Errorf("OpenCount = %d with 5 keys", s.OpenCount())
				}
			}
		})
	}
	wg.Wait()
}

// TestDeadDestinationTimeline runs eight workers against a destination that
// always fails, each attempt taking 2s, over ten simulated minutes. The
// breaker must cap the attempts: the threshold (plus whatever was already in
// flight when it opened), then one probe per cool-down.
func TestDeadDestinationTimeline(t *testing.T) {
	const (
		workers     = 8
		attemptTime = 2 * time.Second
		tick        = 100 * time.Millisecond
		horizon     = 10 * time.Minute
	)
	s := New(Config{Failures: testFailures, Cooldown: testCooldown})

	type worker struct {
		busyUntil time.Time // attempt in flight until then
		permit    Permit
		dueAt     time.Time // when its (always present) job is due again
	}
	ws := make([]worker, workers)
	var attempts, attemptsWhileOpen int
	var firstOpen, lastProbe time.Time

	for now := t0; now.Before(t0.Add(horizon)); now = now.Add(tick) {
		for i := range ws {
			w := &ws[i]
			if !w.busyUntil.IsZero() && !now.Before(w.busyUntil) {
				s.Report(w.permit, false, now)
				w.busyUntil = time.Time{}
				if firstOpen.IsZero() && s.State(dest) == Open {
					firstOpen = now
				}
			}
			if !w.busyUntil.IsZero() || now.Before(w.dueAt) {
				continue
			}
			p, retryAt, ok := s.Allow(dest, now)
			if !ok {
				w.dueAt = retryAt // shed: no attempt spent
				continue
			}
			attempts++
			if !firstOpen.IsZero() {
				attemptsWhileOpen++
				if !lastProbe.IsZero() && now.Sub(lastProbe) < testCooldown {
					t.Fatalf("probe at +%v only %v after the previous one", now.Sub(t0), now.Sub(lastProbe))
				}
				lastProbe = now
			}
			w.permit, w.busyUntil = p, now.Add(attemptTime)
		}
	}

	if firstOpen.IsZero() {
		t.Fatal("the breaker never opened")
	}
	// Each probe needs its own cool-down after the previous re-opening.
	maxProbes := int(t0.Add(horizon).Sub(firstOpen)/testCooldown) + 1
	if attemptsWhileOpen > maxProbes {
		t.Errorf("%d attempts after opening, want at most %d probes", attemptsWhileOpen, maxProbes)
	}
	if before := attempts - attemptsWhileOpen; before > testFailures+workers-1 {
		t.Errorf("%d attempts before opening, want at most %d", before, testFailures+workers-1)
	}
	// Without the breaker every worker would have tried every 2s.
	if attempts >= int(horizon/attemptTime) {
		t.Errorf("%d attempts: the breaker shed nothing", attempts)
	}
	t.Logf("%d attempts in %v, %d of them probes", attempts, horizon, attemptsWhileOpen)
}

func TestStateString(t *testing.T) {
	for s, want := range map[State]string{Closed: "closed", Open: "open", HalfOpen: "half-open", State(9): "unknown"} {
		if got := s.String(); got != want {
			t.Errorf("State(%d).String() = %q, want %q", s, got, want)
		}
	}
}
