package ratelimit

import (
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestRefill(t *testing.T) {
	cases := []struct {
		name    string
		tokens  float64
		elapsed time.Duration
		rate    float64
		burst   float64
		want    float64
	}{
		{"nothing elapsed", 0.5, 0, 10, 5, 0.5},
		{"partial refill", 0, 250 * time.Millisecond, 10, 5, 2.5},
		{"capped at burst", 4, time.Hour, 10, 5, 5},
		{"clock went backwards", 2, -time.Second, 10, 5, 2},
		{"slow rate", 0, time.Second, 0.5, 1, 0.5},
	}
	for _, tc := range cases {
		if got := refill(tc.tokens, tc.elapsed, tc.rate, tc.burst); got != tc.want {
			t.Errorf("%s: refill = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestTake(t *testing.T) {
	cases := []struct {
		name        string
		tokens      float64
		rate        float64
		wantAllowed bool
		wantLeft    float64
		wantWait    time.Duration
	}{
		{"a whole token", 1, 10, true, 0, 0},
		{"more than one", 3.5, 10, true, 2.5, 0},
		{"empty", 0, 10, false, 0, 100 * time.Millisecond},
		{"a fraction short", 0.75, 1, false, 0.75, 250 * time.Millisecond},
		{"absurdly slow rate", 0, 1e-300, false, 0, maxWait},
	}
	for _, tc := range cases {
		allowed, left, wait := take(tc.tokens, tc.rate)
		if allowed != tc.wantAllowed || left != tc.wantLeft || wait != tc.wantWait {
			t.Errorf("%s: take = %v %v %v, want %v %v %v", tc.name, allowed, left, wait, tc.wantAllowed, tc.wantLeft, tc.wantWait)
		}
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	cases := []struct {
		wait time.Duration
		want int
	}{
		{0, 1},
		{time.Millisecond, 1},
		{time.Second, 1},
		{1001 * time.Millisecond, 2},
		{maxWait, 3600},
	}
	for _, tc := range cases {
		if got := RetryAfterSeconds(tc.wait); got != tc.want {
			t.Errorf("RetryAfterSeconds(%s) = %d, want %d", tc.wait, got, tc.want)
		}
	}
}

func TestLimiterAllowsABurstThenTheRate(t *testing.T) {
	clock := newFakeClock()
	l := New(2, 3, clock.Now) // 2 a second, 3 at once
	for i := range 3 {
		if ok, _ := l.Allow("acme"); !ok {
			t.Fatalf("request %d of the burst denied", i+1)
		}
	}
	ok, wait := l.Allow("acme")
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("past the burst: allowed %v, wait %s; want denied, 500ms", ok, wait)
	}
	// Other keys have buckets of their own.
	if ok, _ := l.Allow("globex"); !ok {
		t.Fatal("another key was denied")
	}
	clock.Advance(250 * time.Millisecond)
	if ok, wait := l.Allow("acme"); ok || wait != 250*time.Millisecond {
		t.Fatalf("half a token: allowed %v, wait %s; want denied, 250ms", ok, wait)
	}
	clock.Advance(250 * time.Millisecond)
	if ok, _ := l.Allow("acme"); !ok {
		t.Fatal("denied once a token had refilled")
	}
	if ok, _ := l.Allow("acme"); ok {
		t.Fatal("allowed a second request on one refilled token")
	}
}

func TestLimiterForgetsIdleKeys(t *testing.T) {
	clock := newFakeClock()
	l := New(10, 5, clock.Now) // full again 500ms after running dry
	for _, key := range []string{"a", "b", "c"} {
		l.Allow(key)
	}
	clock.Advance(300 * time.Millisecond)
	for range 5 {
		l.Allow("busy") // drained: still remembered after the sweep
	}
	clock.Advance(300 * time.Millisecond)
	l.Allow("d")
	if got := l.Len(); got != 2 {
		t.Errorf("after a sweep the limiter holds %d keys, want 2 (busy, d)", got)
	}
	// Forgetting must not change answers: busy has refilled 3 tokens.
	for i := range 3 {
		if ok, _ := l.Allow("busy"); !ok {
			t.Fatalf("busy: request %d denied", i+1)
		}
	}
	if ok, _ := l.Allow("busy"); ok {
		t.Error("busy: allowed past its refilled tokens")
	}
}

func TestLimiterIsSafeForConcurrentUse(t *testing.T) {
	clock := newFakeClock()
	l := New(1, 100, clock.Now)
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if ok, _ := l.Allow("acme"); ok {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if allowed != 100 {
		t.Errorf("%d of 400 simultaneous requests allowed, want exactly the burst of 100", allowed)
	}
}
