package catalog

import (
	"testing"
	"time"
)

func TestRateAtReadsTheSlotsOfTheWindow(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name          string
		tat, busy     time.Duration // from t0
		now           time.Duration
		wantCurrent   float64
		wantThrottled bool
	}{
		{"busy all window, slots ahead", 12 * time.Second, -time.Minute, 10 * time.Second, 10, true},
		{"busy for the last 5 s", 10*time.Second + 100*time.Millisecond, 5 * time.Second, 10 * time.Second, 10, false},
		{"busy for 5 s, idle for the last 5 s", 5 * time.Second, 0, 10 * time.Second, 5, false},
		{"idle since 2 s", 8 * time.Second, 0, 10 * time.Second, 8, false},
		{"idle for longer than the window", time.Second, 0, time.Minute, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rateAt(10, t0.Add(tt.tat), t0.Add(tt.busy), t0.Add(tt.now))
			if d := r.Current - tt.wantCurrent; d > 1e-9 || d < -1e-9 || r.Throttled != tt.wantThrottled {
				t.Errorf("rateAt = %+v, want current %v throttled %v", r, tt.wantCurrent, tt.wantThrottled)
			}
		})
	}
}
