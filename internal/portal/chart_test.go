package portal

import (
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

func TestOutcomes(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)
	at := func(ago time.Duration, state string) hubapi.Delivery {
		return hubapi.Delivery{State: state, CreatedAt: now.Add(-ago)}
	}
	buckets := Outcomes([]hubapi.Delivery{
		at(0, "succeeded"), at(10*time.Minute, "dead"), at(20*time.Minute, "pending"),
		at(time.Hour, "succeeded"), at(time.Hour, "in_flight"), at(time.Hour, "canceled"),
		at(23*time.Hour, "succeeded"), at(24*time.Hour, "succeeded"), // the first in, the second out
	}, now, 24)
	if len(buckets) != 24 || !buckets[23].Start.Equal(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("buckets end with %v, want the hour of now last", buckets[len(buckets)-1].Start)
	}
	want := map[int]HourBucket{
		23: {Succeeded: 1, Dead: 1, Waiting: 1},
		22: {Succeeded: 1, Waiting: 1},
		0:  {Succeeded: 1},
	}
	for i, b := range buckets {
		w := want[i]
		if b.Succeeded != w.Succeeded || b.Dead != w.Dead || b.Waiting != w.Waiting {
			t.Errorf("hour %d (%v): %+v, want %+v", i, b.Start, b, w)
		}
	}
	if got := Summary(buckets); got != "In the last 24 hours: 3 succeeded, 1 dead, 2 waiting (75.0% of those settled succeeded)." {
		t.Errorf("summary %q", got)
	}
	if got := Summary(Outcomes(nil, now, 24)); got != "No deliveries in the last 24 hours." {
		t.Errorf("empty summary %q", got)
	}
	svg := string(OutcomeChart(buckets))
	if strings.Count(svg, "<rect") != 6 || !strings.Contains(svg, `role="img"`) || !strings.Contains(svg, "75.0%") {
		t.Errorf("chart:\n%s", svg)
	}
}

func TestLatencyChart(t *testing.T) {
	since := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ms := func(n int64) *int64 { return &n }
	l := hubapi.AttemptLatency{Since: since, Hours: make([]hubapi.LatencyHour, 24)}
	for i := range l.Hours {
		l.Hours[i].Start = since.Add(time.Duration(i) * time.Hour)
	}
	if got := LatencySummary(l); got != "No attempts in the last 24 hours." {
		t.Errorf("empty summary %q", got)
	}
	if svg := string(LatencyChart(l)); strings.Contains(svg, "<rect") || !strings.Contains(svg, "No attempts") {
		t.Errorf("empty chart:\n%s", svg)
	}
	l.Hours[3] = hubapi.LatencyHour{Start: l.Hours[3].Start, Attempts: 10, P50MS: ms(40), P95MS: ms(900)}
	l.Hours[20] = hubapi.LatencyHour{Start: l.Hours[20].Start, Attempts: 5, P50MS: ms(0), P95MS: ms(2)}
	want := "In the last 24 hours: 15 attempts; the slowest hour, from 15:00 UTC, took 40 ms at the median and 900 ms at the 95th percentile."
	if got := LatencySummary(l); got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	svg := string(LatencyChart(l))
	if strings.Count(svg, `<rect class="p50"`) != 2 || strings.Count(svg, `<rect class="p95"`) != 2 ||
		!strings.Contains(svg, `role="img"`) || !strings.Contains(svg, "900 ms") || !strings.Contains(svg, `height="1.0"`) {
		t.Errorf("chart:\n%s", svg)
	}
}
