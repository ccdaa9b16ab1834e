package schedule

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// always returns an rnd that yields r every time.
func always(r float64) func() float64 { return func() float64 { return r } }

// justBelowOne is the largest float64 rand.Float64 can return.
var justBelowOne = math.Nextafter(1, 0)

// TestDefaultIndexing pins the documented words (docs/concepts.md, Retries): "the first step is the first
// attempt; after the 8th failed attempt the job is dead-lettered". With
// rnd = 1⁻ the delay is (almost) the step itself, which exposes off-by-one.
func TestDefaultIndexing(t *testing.T) {
	tests := []struct {
		attemptsMade  int
		wantUpTo      time.Duration // upper bound of the wait before attempt attemptsMade+1
		wantExhausted bool
	}{
		{0, 0, false}, // before attempt 1: step 1 = 0s
		{1, 5 * time.Second, false},
		{2, 5 * time.Minute, false},
		{3, 30 * time.Minute, false},
		{4, 2 * time.Hour, false},
		{5, 5 * time.Hour, false},
		{6, 10 * time.Hour, false},
		{7, 10 * time.Hour, false}, // before attempt 8, the last one
		{8, 0, true},               // the 8th attempt failed: dead-lettered
		{9, 0, true},
		{-1, 0, false}, // nonsense input counts as no attempt yet
	}
	for _, tt := range tests {
		delay, exhausted := Default.Next(tt.attemptsMade, always(justBelowOne))
		if exhausted != tt.wantExhausted {
			t.Errorf("Next(%d) exhausted = %v, want %v", tt.attemptsMade, exhausted, tt.wantExhausted)
		}
		// 1⁻ × step truncates to at most 1ns under the step.
		if delay > tt.wantUpTo || tt.wantUpTo-delay > time.Nanosecond {
			t.Errorf("Next(%d) with rnd→1 = %v, want ≈ %v", tt.attemptsMade, delay, tt.wantUpTo)
		}
	}
	if got := Default.Attempts(); got != 8 {
		t.Errorf("Default.Attempts() = %d, want 8", got)
	}
}

func TestDefaultTotalIsAboutTwentyEightHours(t *testing.T) {
	var total time.Duration
	for _, step := range Default.Steps() {
		total += step
	}
	if want := 27*time.Hour + 35*time.Minute + 5*time.Second; total != want {
		t.Errorf("sum of the default curve = %v, want %v", total, want)
	}
}

func TestOverrideIndexing(t *testing.T) {
	c, err := Parse([]string{"1m", "2m"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		attemptsMade  int
		want          time.Duration
		wantExhausted bool
	}{
		{0, 30 * time.Second, false}, // a non-zero first step delays the first attempt too
		{1, time.Minute, false},
		{2, 0, true},
	}
	for _, tt := range tests {
		delay, exhausted := c.Next(tt.attemptsMade, always(0.5))
		if delay != tt.want || exhausted != tt.wantExhausted {
			t.Errorf("Next(%d) = (%v, %v), want (%v, %v)", tt.attemptsMade, delay, exhausted, tt.want, tt.wantExhausted)
		}
	}
}

func TestJitterBounds(t *testing.T) {
	const step = 2 * time.Hour // Default's step 5, used after 4 failures
	tests := []struct {
		name string
		r    float64
		want time.Duration
	}{
		{"zero", 0, 0},
		{"half", 0.5, time.Hour},
		{"just below one", justBelowOne, step - time.Nanosecond},
		{"one is clamped to the step", 1, step},
		{"above one is clamped", 7, step},
		{"negative is clamped", -0.5, 0},
		{"NaN is clamped", math.NaN(), 0},
		{"+Inf is clamped", math.Inf(1), step},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			delay, exhausted := Default.Next(4, always(tt.r))
			if exhausted {
				t.Fatal("exhausted after 4 attempts")
			}
			if delay != tt.want {
				t.Errorf("delay = %v, want %v", delay, tt.want)
			}
		})
	}
}

// TestJitterStaysInStep is the property: for any rnd value and any attempt,
// the delay lies in [0, step].
func TestJitterStaysInStep(t *testing.T) {
	src := rand.New(rand.NewPCG(1, 2))
	steps := Default.Steps()
	for range 100_000 {
		n := src.IntN(len(steps))
		delay, exhausted := Default.Next(n, src.Float64)
		if exhausted || delay < 0 || delay > steps[n] {
			t.Fatalf("Next(%d) = (%v, %v), want a delay in [0, %v]", n, delay, exhausted, steps[n])
		}
	}
}

func TestNilRndUsesPackageRandomness(t *testing.T) {
	for range 1000 {
		delay, exhausted := Default.Next(1, nil)
		if exhausted || delay < 0 || delay > 5*time.Second {
			t.Fatalf("Next(1, nil) = (%v, %v), want a delay in [0, 5s]", delay, exhausted)
		}
	}
}

func TestParse(t *testing.T) {
	twelve := slices.Repeat([]string{"1s"}, 12)
	tests := []struct {
		name     string
		steps    []string
		want     []time.Duration
		wantErrs []string // substrings the error must contain
	}{
		{"one step", []string{"0s"}, []time.Duration{0}, nil},
		{"twelve steps", twelve, slices.Repeat([]time.Duration{time.Second}, 12), nil},
		{"bounds inclusive", []string{"0", "10h"}, []time.Duration{0, 10 * time.Hour}, nil},
		{"mixed units", []string{"1h30m", "250ms", "1.5s", "90s"}, []time.Duration{90 * time.Minute, 250 * time.Millisecond, 1500 * time.Millisecond, 90 * time.Second}, nil},
		{"nil", nil, nil, []string{"1 to 12 steps, got 0"}},
		{"empty", []string{}, nil, []string{"1 to 12 steps, got 0"}},
		{"thirteen", slices.Repeat([]string{"1s"}, 13), nil, []string{"1 to 12 steps, got 13"}},
		{"negative", []string{"1s", "-1s"}, nil, []string{"step 2", "-1s", "between 0s and 10h"}},
		{"over ten hours", []string{"10h0m0.000000001s"}, nil, []string{"step 1", "between 0s and 10h"}},
		{"days are not a unit", []string{"1s", "2s", "1d"}, nil, []string{"step 3", `"1d"`, "not a Go duration"}},
		{"bare number", []string{"5"}, nil, []string{"step 1", "not a Go duration"}},
		{"garbage", []string{"soon"}, nil, []string{"step 1", `"soon"`}},
		{"empty string", []string{""}, nil, []string{"step 1", `""`}},
		{"overflow", []string{"99999999999h"}, nil, []string{"step 1", "not a Go duration"}},
		{"first bad step is named", []string{"x", "-1s"}, nil, []string{"step 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse(tt.steps)
			if tt.wantErrs == nil {
				if err != nil {
					t.Fatalf("Parse(%q) error: %v", tt.steps, err)
				}
				if got := c.Steps(); !slices.Equal(got, tt.want) {
					t.Errorf("Steps() = %v, want %v", got, tt.want)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q) error = %v, want one wrapping ErrInvalid", tt.steps, err)
			}
			for _, want := range tt.wantErrs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

func TestForSubscription(t *testing.T) {
	tests := []struct {
		name        string
		stored      []string
		want        []time.Duration
		wantIgnored bool
	}{
		{"no override", nil, Default.Steps(), false},
		{"empty override", []string{}, Default.Steps(), false},
		{"valid override", []string{"1s", "1m"}, []time.Duration{time.Second, time.Minute}, false},
		{"malformed override falls back", []string{"1s", "forever"}, Default.Steps(), true},
		{"out-of-range override falls back", []string{"11h"}, Default.Steps(), true},
		{"too long override falls back", slices.Repeat([]string{"1s"}, 13), Default.Steps(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ignored := ForSubscription(tt.stored)
			if (ignored != nil) != tt.wantIgnored {
				t.Fatalf("ignored = %v, want ignored: %v", ignored, tt.wantIgnored)
			}
			if ignored != nil && !errors.Is(ignored, ErrInvalid) {
				t.Errorf("ignored = %v, want it to wrap ErrInvalid", ignored)
			}
			if got := c.Steps(); !slices.Equal(got, tt.want) {
				t.Errorf("Steps() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestZeroCurveIsDefault(t *testing.T) {
	var zero Curve
	if !slices.Equal(zero.Steps(), Default.Steps()) {
		t.Errorf("zero Curve steps = %v, want Default", zero.Steps())
	}
	if _, exhausted := zero.Next(7, always(0)); exhausted {
		t.Error("zero Curve exhausted after 7 attempts; Default allows 8")
	}
}

func TestStepsIsACopy(t *testing.T) {
	steps := Default.Steps()
	steps[0] = time.Hour
	if Default.Steps()[0] != 0 {
		t.Error("mutating Steps() changed Default")
	}
}

func TestApplyRetryAfter(t *testing.T) {
	tests := []struct {
		name              string
		delay, retryAfter time.Duration
		want              time.Duration
	}{
		{"no header", 3 * time.Second, 0, 3 * time.Second},
		{"negative header ignored", 3 * time.Second, -time.Minute, 3 * time.Second},
		{"longer header wins", 3 * time.Second, time.Minute, time.Minute},
		{"shorter header keeps the curve", 2 * time.Hour, time.Minute, 2 * time.Hour},
		{"header capped at 10h", time.Second, 48 * time.Hour, 10 * time.Hour},
		{"exactly 10h", 0, 10 * time.Hour, 10 * time.Hour},
		{"curve at 10h and long header", 10 * time.Hour, 11 * time.Hour, 10 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ApplyRetryAfter(tt.delay, tt.retryAfter); got != tt.want {
				t.Errorf("ApplyRetryAfter(%v, %v) = %v, want %v", tt.delay, tt.retryAfter, got, tt.want)
			}
		})
	}
}

// FuzzParse checks that any accepted override keeps every promise of the
// package: within the bounds, and every wait inside its step.
func FuzzParse(f *testing.F) {
	f.Add("0s", "5s", 0.5)
	f.Add("10h", "-1s", 0.999)
	f.Add("1d", "", 0.0)
	f.Fuzz(func(t *testing.T, a, b string, r float64) {
		c, err := Parse([]string{a, b})
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		steps := c.Steps()
		for n, step := range steps {
			if step < 0 || step > MaxStep {
				t.Fatalf("accepted step %d = %v", n+1, step)
			}
			if delay, exhausted := c.Next(n, always(r)); exhausted || delay < 0 || delay > step {
				t.Fatalf("Next(%d) = (%v, %v) for step %v", n, delay, exhausted, step)
			}
		}
		if _, exhausted := c.Next(len(steps), always(r)); !exhausted {
			t.Fatal("not exhausted after the last step")
		}
	})
}
