package backoff

import (
	"context"
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
