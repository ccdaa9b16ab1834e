package backoff

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	p := Policy{Min: 100 * time.Millisecond, Max: 5 * time.Second}
	for _, tc := range []struct {
		retry  int
		jitter float64
		want   time.Duration
	}{
		{0, 0, 50 * time.Millisecond},
		{0, 0.999999, 100 * time.Millisecond},
		{1, 0, 100 * time.Millisecond},
		{3, 0.5, 600 * time.Millisecond},
		{6, 0, 2500 * time.Millisecond}, // capped at Max
		{6, 0.999999, 5 * time.Second},
		{40, 0, 2500 * time.Millisecond}, // no overflow
		{62, 0.5, 3750 * time.Millisecond},
	} {
		got := p.Delay(tc.retry, tc.jitter)
		if got.Round(time.Millisecond) != tc.want {
			t.Errorf("Delay(%d, %v) = %v, want %v", tc.retry, tc.jitter, got, tc.want)
		}
	}
}

func TestSleepEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Sleep(ctx, time.Hour) {
		t.Error("Sleep waited out a cancelled context")
	}
	if !Sleep(context.Background(), time.Millisecond) {
		t.Error("Sleep cut a wait short")
	}
}

func TestRetry(t *testing.T) {
	errDown := errors.New("down")
	errBad := errors.New("bad input")
	fast := Policy{Min: time.Microsecond, Max: time.Microsecond}
	for _, tc := range []struct {
		name      string
		failures  []error // what the tries return before they succeed
		stopAfter int     // stop gives up at this retry number; -1 never
		want      error
		tries     int
	}{
		{"first try succeeds", nil, -1, nil, 1},
		{"succeeds after failures", []error{errDown, errDown}, -1, nil, 3},
		{"stop gives up", []error{errDown, errDown, errDown}, 1, errDown, 2},
		{"stop refuses an error at once", []error{errBad}, 0, errBad, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tries := 0
			var retries []int
			err := fast.Retry(context.Background(), func() error {
				tries++
				if tries <= len(tc.failures) {
					return tc.failures[tries-1]
				}
				return nil
			}, func(_ error, retry int, wait time.Duration) bool {
				retries = append(retries, retry)
				if wait <= 0 || wait > fast.Max {
					t.Errorf("wait %v outside (0, %v]", wait, fast.Max)
				}
				return retry == tc.stopAfter
			})
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("Retry = %v, want %v", err, tc.want)
			}
			if tries != tc.tries {
				t.Errorf("%d tries, want %d", tries, tc.tries)
			}
			for i, r := range retries {
				if r != i {
					t.Errorf("stop saw retry numbers %v, want 0, 1, ...", retries)
				}
			}
		})
	}
}

func TestRetryEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tries := 0
	err := Policy{Min: time.Hour, Max: time.Hour}.Retry(ctx, func() error {
		tries++
		cancel()
		return errors.New("down")
	}, func(error, int, time.Duration) bool { return false })
	if !errors.Is(err, context.Canceled) || tries != 1 {
		t.Errorf("Retry = %v after %d tries, want context.Canceled after 1", err, tries)
	}
}
