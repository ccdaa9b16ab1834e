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
