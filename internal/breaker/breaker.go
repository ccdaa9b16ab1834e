// Package breaker keeps one circuit breaker per destination (docs/concepts.md, Circuit breaker). It
// holds state in memory only — state per process is by design — and reads no
// clock: every call takes the time, so tests and the dispatcher agree on it.
//
// The rule (docs/concepts.md, Circuit breaker): each (tenant, destination) pair has
// a breaker. After STREAMING_HUB_BREAKER_FAILURES (default 5) consecutive
// failures it opens; while open, jobs for that destination are shed:
// rescheduled without an attempt and without spending an attempt. After a
// cool-down (STREAMING_HUB_BREAKER_COOLDOWN, default 30s) one probe attempt is
// let through; a success closes it, a failure re-opens it.
//
// The caller forms the key (tenant and destination) and brackets every
// attempt:
//
//	permit, retryAt, ok := breakers.Allow(key, now)
//	if !ok {
//		// shed: reschedule the job at retryAt, attempt count unchanged
//	}
//	outcome := sink.Deliver(ctx, delivery)
//	breakers.Report(permit, outcome.OK, time.Now())
//
// Decisions the rule leaves open, made here:
//
//   - A report only counts for the phase its permit was granted in. When a
//     breaker opens, attempts still in flight from the closed phase may fail
//     afterwards; they neither extend the cool-down nor close a later phase.
//   - Half-open lets exactly one probe through; every other caller is shed
//     until the probe reports. A probe that never reports (its worker died)
//     is given up after another cool-down, and the next caller becomes the
//     new probe.
//   - Open turns half-open lazily, when a caller asks after the cool-down.
//   - A breaker nobody has asked about or reported to for IdleTimeout
//     (default 24h, longer than any retry step, so a destination whose jobs
//     are all waiting on the curve keeps its breaker) is forgotten, which is
//     the same as closed with no failures. This bounds memory by the
//     destinations in recent use.
package breaker

import (
	"sync"
	"time"
)

// Defaults of the breaker (docs/concepts.md, Circuit breaker), and of the idle rule above.
const (
	DefaultFailures    = 5
	DefaultCooldown    = 30 * time.Second
	DefaultIdleTimeout = 24 * time.Hour
)

// State is the position of one breaker.
type State uint8

// The states of a breaker; the zero State is Closed.
const (
	Closed   State = iota // attempts flow; consecutive failures are counted
	Open                  // every attempt is shed until the cool-down ends
	HalfOpen              // one probe is in flight; everything else is shed
)

func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	}
	return "unknown"
}

// Transition is one change of state, for logs and metrics. Forgetting a
// breaker that was not closed (idle, or by [Set.Forget]) is reported as a
// transition to Closed.
type Transition struct {
	Key      string
	From, To State
	At       time.Time
}

// Config tunes a [Set]. Zero or negative durations and counts mean the
// defaults.
type Config struct {
	Failures    int           // consecutive failures that open a breaker
	Cooldown    time.Duration // how long an open breaker sheds before a probe
	IdleTimeout time.Duration // how long an unused breaker is remembered

	// OnTransition, when set, is called after every change of state,
	// outside the Set's lock (so it may call the Set), possibly from several
	// goroutines at once; order by At when order matters.
	OnTransition func(Transition)
}

// Permit is the right to make one attempt, handed back to [Set.Report] with
// its outcome. The zero Permit is never granted and reporting it does
// nothing.
type Permit struct {
	key   string
	phase uint64
}

// Set is the breakers of one process, keyed by the caller. It is safe for
// concurrent use; its zero value is not usable, call [New].
type Set struct {
	cfg Config

	mu        sync.Mutex
	breakers  map[string]*breaker
	notClosed int       // open or half-open breakers, for the gauge
	phases    uint64    // last phase number handed out; 0 is never used
	nextSweep time.Time // when idle breakers are looked for again
}

type breaker struct {
	state    State
	phase    uint64 // permits of any other phase are stale
	failures int    // consecutive failures reported in the current closed phase

	// Open: when the cool-down ends. HalfOpen: when the outstanding probe is
	// given up.
	until    time.Time
	lastUsed time.Time
}

// New returns an empty Set; every key starts closed.
func New(cfg Config) *Set {
	if cfg.Failures <= 0 {
		cfg.Failures = DefaultFailures
	}
	if cfg.Cooldown <= 0 {
		cfg.Cooldown = DefaultCooldown
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	return &Set{cfg: cfg, breakers: make(map[string]*breaker)}
}

// Allow asks whether an attempt to key may be made now. If ok, the attempt
// must be made and its outcome reported with the permit. If not, the job is
// to be shed and asked about again no earlier than retryAt: the end of the
// cool-down, or, while a probe is in flight, the moment that probe would be
// given up.
func (s *Set) Allow(key string, now time.Time) (permit Permit, retryAt time.Time, ok bool) {
	var fired []Transition
	defer func() { s.notify(fired) }()

	s.mu.Lock()
	defer s.mu.Unlock()
	fired = s.sweep(now)

	b := s.breakers[key]
	if b == nil {
		b = &breaker{state: Closed, phase: s.newPhase()}
		s.breakers[key] = b
	}
	b.lastUsed = now

	switch b.state {
	case Open, HalfOpen:
		if now.Before(b.until) {
			return Permit{}, b.until, false
		}
		// The cool-down is over, or the previous probe is presumed lost:
		// this caller becomes the probe.
		if b.state == Open {
			fired = append(fired, s.move(key, b, HalfOpen, now))
		}
		b.phase = s.newPhase()
		b.until = now.Add(s.cfg.Cooldown)
	}
	return Permit{key: key, phase: b.phase}, time.Time{}, true
}

// Report records the outcome of the attempt made under permit. Stale permits
// (granted before the breaker last changed phase) and the zero Permit are
// ignored.
func (s *Set) Report(permit Permit, success bool, now time.Time) {
	var fired []Transition
	defer func() { s.notify(fired) }()

	s.mu.Lock()
	defer s.mu.Unlock()

	b := s.granted(permit, now)
	if b == nil {
		return
	}

	switch {
	case b.state == Closed && success:
		b.failures = 0
	case b.state == Closed:
		b.failures++
		if b.failures >= s.cfg.Failures {
			fired = append(fired, s.open(permit.key, b, now))
		}
	case b.state == HalfOpen && success:
		fired = append(fired, s.move(permit.key, b, Closed, now))
		b.phase = s.newPhase()
		b.failures = 0
	case b.state == HalfOpen:
		fired = append(fired, s.open(permit.key, b, now))
	}
}

// Release hands back a permit whose attempt never reached the destination
// (the sink refused the event before sending anything), so its outcome
// says nothing about the destination: no failure is counted, and a
// half-open breaker's probe slot is freed for the next caller at once
// instead of after a cool-down. Stale permits and the zero Permit are
// ignored.
func (s *Set) Release(permit Permit, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.granted(permit, now); b != nil && b.state == HalfOpen {
		b.until = now
	}
}

// granted is the breaker permit was granted by, marked used at now, or nil
// when the permit is stale or the zero Permit. Call it with s.mu held.
func (s *Set) granted(permit Permit, now time.Time) *breaker {
	b := s.breakers[permit.key]
	if b == nil || permit.phase == 0 || b.phase != permit.phase {
		return nil
	}
	b.lastUsed = now
	return b
}

// State is key's current state. An open breaker whose cool-down has ended
// stays Open until a caller is let through as the probe.
func (s *Set) State(key string) State {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.breakers[key]; b != nil {
		return b.state
	}
	return Closed
}

// Forget drops the breakers whose key drop accepts, as if they had never
// been used: the caller knows their destinations take no more attempts
// (no subscription delivers there any longer, or the tenant is purged), so
// an open one would otherwise be counted and shown until it went idle.
// Permits granted by a forgotten breaker are stale. It reports how many
// were dropped.
func (s *Set) Forget(drop func(key string) bool, now time.Time) int {
	var fired []Transition
	defer func() { s.notify(fired) }()

	s.mu.Lock()
	defer s.mu.Unlock()
	dropped := 0
	for key, b := range s.breakers {
		if !drop(key) {
			continue
		}
		if b.state != Closed {
			fired = append(fired, s.move(key, b, Closed, now))
		}
		delete(s.breakers, key)
		dropped++
	}
	return dropped
}

// OpenCount is how many breakers are open or half-open, for a gauge.
func (s *Set) OpenCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notClosed
}

// open starts a fresh cool-down. The new phase makes every outstanding permit
// stale, so late reports cannot touch the open breaker.
func (s *Set) open(key string, b *breaker, now time.Time) Transition {
	t := s.move(key, b, Open, now)
	b.phase = s.newPhase()
	b.until = now.Add(s.cfg.Cooldown)
	return t
}

func (s *Set) move(key string, b *breaker, to State, now time.Time) Transition {
	t := Transition{Key: key, From: b.state, To: to, At: now}
	switch {
	case b.state == Closed && to != Closed:
		s.notClosed++
	case b.state != Closed && to == Closed:
		s.notClosed--
	}
	b.state = to
	return t
}

// newPhase numbers phases across the whole Set, so a permit outliving a
// forgotten breaker can never match the breaker that replaces it.
func (s *Set) newPhase() uint64 {
	s.phases++
	return s.phases
}

// sweep forgets idle breakers. It runs at most every half IdleTimeout, so a
// breaker is forgotten between one and one and a half IdleTimeouts after its
// last use, at amortised constant cost per call.
func (s *Set) sweep(now time.Time) []Transition {
	if now.Before(s.nextSweep) {
		return nil
	}
	s.nextSweep = now.Add(s.cfg.IdleTimeout / 2)
	var fired []Transition
	for key, b := range s.breakers {
		if now.Sub(b.lastUsed) < s.cfg.IdleTimeout {
			continue
		}
		if b.state != Closed {
			fired = append(fired, s.move(key, b, Closed, now))
		}
		delete(s.breakers, key)
	}
	return fired
}

func (s *Set) notify(fired []Transition) {
	if s.cfg.OnTransition == nil {
		return
	}
	for _, t := range fired {
		s.cfg.OnTransition(t)
	}
}
