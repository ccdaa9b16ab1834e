package ingest

import (
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/match"
)

func TestFilterLogSamplerLogsOncePerWindowPerSubscription(t *testing.T) {
	fail := func(sub byte) match.FilterFailure {
		return match.FilterFailure{Route: match.Route{SubscriptionID: [16]byte{sub}, TenantID: "t"}, Reason: "eval_error", Error: "no such key"}
	}
	start := time.Unix(1_000_000, 0)
	s := newFilterLogSampler(time.Minute)
	steps := []struct {
		at       time.Duration
		failures []match.FilterFailure
		want     map[byte]int // subscription → count of its line
	}{
		{0, []match.FilterFailure{fail(1), fail(1), fail(2)}, map[byte]int{1: 1, 2: 1}},
		{10 * time.Second, []match.FilterFailure{fail(1), fail(1)}, nil},
		{59 * time.Second, []match.FilterFailure{fail(1), fail(2)}, nil},
		// subscription 1: the failure after its first line, two, one and this one.
		{60 * time.Second, []match.FilterFailure{fail(1)}, map[byte]int{1: 5}},
		{90 * time.Second, []match.FilterFailure{fail(2)}, map[byte]int{2: 2}},
		{100 * time.Second, []match.FilterFailure{fail(1)}, nil},
	}
	for i, st := range steps {
		lines := s.note(st.failures, start.Add(st.at))
		got := map[byte]int{}
		for _, l := range lines {
			got[l.failure.SubscriptionID[0]] = l.count
		}
		if len(got) != len(st.want) {
			t.Fatalf("step %d: lines %v, want %v", i, got, st.want)
		}
		for sub, n := range st.want {
			if got[sub] != n {
				t.Fatalf("step %d: lines %v, want %v", i, got, st.want)
			}
		}
	}
}
