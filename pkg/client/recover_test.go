package client

import (
	"encoding/json"
	"testing"
	"time"
)

func TestRecoverWindowsCoverTheRangeWithoutOverlap(t *testing.T) {
	since := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		span time.Duration
		want int
	}{
		{time.Minute, 1}, {time.Hour, 1}, {90 * time.Minute, 2}, {6 * time.Hour, 6}, {30 * 24 * time.Hour, 100},
	}
	for _, c := range cases {
		until := since.Add(c.span)
		w := recoverWindows(since, until, time.Hour, 100)
		if len(w) != c.want || !w[0][0].Equal(since) || !w[len(w)-1][1].Equal(until) {
			t.Errorf("%s: %d windows from %v to %v, want %d from since to until", c.span, len(w), w[0][0], w[len(w)-1][1], c.want)
			continue
		}
		for i := 1; i < len(w); i++ {
			if !w[i][0].Equal(w[i-1][1]) {
				t.Errorf("%s: window %d starts at %v, the one before ends at %v", c.span, i, w[i][0], w[i-1][1])
			}
		}
	}
	raw, _ := json.Marshal(recoverWindows(since, since, time.Hour, 100))
	if string(raw) != "null" {
		t.Errorf("an empty range has windows %s", raw)
	}
}
