package portal

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// chartHours is how far back a subscription's chart looks, an hour a bar.
const chartHours = 24

// chartSample bounds the deliveries a chart reads: the latest ones, one
// page of the list at its largest, so a busy subscription's page costs
// what a quiet one's does. A subscription with more deliveries than this
// in a day charts its latest hours only, and the chart says so.
const chartSample = hubapi.MaxPageLimit

// HourBucket is one hour of a subscription's deliveries, by how they
// stand now.
type HourBucket struct {
	Start     time.Time
	Succeeded int
	Dead      int
	// Waiting are pending or in flight; canceled ones are not counted.
	Waiting int
}

// Total is every delivery the bucket counts.
func (b HourBucket) Total() int { return b.Succeeded + b.Dead + b.Waiting }

// Outcomes sorts deliveries into the hours before now, oldest hour first,
// by when each was created.
func Outcomes(deliveries []hubapi.Delivery, now time.Time, hours int) []HourBucket {
	end := now.UTC().Truncate(time.Hour).Add(time.Hour)
	start := end.Add(-time.Duration(hours) * time.Hour)
	buckets := make([]HourBucket, hours)
	for i := range buckets {
		buckets[i].Start = start.Add(time.Duration(i) * time.Hour)
	}
	for _, d := range deliveries {
		at := d.CreatedAt.UTC()
		if at.Before(start) || !at.Before(end) {
			continue
		}
		b := &buckets[int(at.Sub(start)/time.Hour)]
		switch d.State {
		case "succeeded":
			b.Succeeded++
		case "dead":
			b.Dead++
		case "pending", "in_flight":
			b.Waiting++
		}
	}
	return buckets
}

// Summary is the chart's sentence: the counts and the share that
// succeeded of those settled.
func Summary(buckets []HourBucket) string {
	var ok, dead, waiting int
	for _, b := range buckets {
		ok, dead, waiting = ok+b.Succeeded, dead+b.Dead, waiting+b.Waiting
	}
	if ok+dead+waiting == 0 {
		return fmt.Sprintf("No deliveries in the last %d hours.", len(buckets))
	}
	rate := ""
	if ok+dead > 0 {
		rate = fmt.Sprintf(" (%.1f%% of those settled succeeded)", 100*float64(ok)/float64(ok+dead))
	}
	return fmt.Sprintf("In the last %d hours: %d succeeded, %d dead, %d waiting%s.", len(buckets), ok, dead, waiting, rate)
}

// OutcomeChart draws the buckets as stacked bars in SVG: numbers and fixed
// words only, so nothing in it needs escaping; the colours come from the
// stylesheet, so they follow light and dark.
func OutcomeChart(buckets []HourBucket) template.HTML {
	const width, height, top, bottom = 720, 160, 10, 20
	most := 1
	for _, b := range buckets {
		most = max(most, b.Total())
	}
	slot := float64(width) / float64(len(buckets))
	scale := float64(height-top-bottom) / float64(most)
	var svg strings.Builder
	fmt.Fprintf(&svg, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-labelledby="chart-title"><title id="chart-title">%s</title>`,
		width, height, template.HTMLEscapeString(Summary(buckets)))
	for i, b := range buckets {
		x := float64(i)*slot + slot*0.15
		y := float64(height - bottom)
		for _, part := range []struct {
			class string
			n     int
		}{{"ok", b.Succeeded}, {"bad", b.Dead}, {"warn", b.Waiting}} {
			if part.n == 0 {
				continue
			}
			h := float64(part.n) * scale
			y -= h
			fmt.Fprintf(&svg, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"></rect>`, part.class, x, y, slot*0.7, h)
		}
		if i%6 == 0 {
			fmt.Fprintf(&svg, `<text x="%.1f" y="%d">%s</text>`, x, height-5, b.Start.Format("15:04"))
		}
	}
	svg.WriteString(`</svg>`)
	return template.HTML(svg.String())
}

// LatencySummary is the latency chart's sentence: how many attempts, and
// the slowest hour by its 95th percentile.
func LatencySummary(l hubapi.AttemptLatency) string {
	var attempts int64
	var slowest *hubapi.LatencyHour
	for i, h := range l.Hours {
		attempts += h.Attempts
		if h.P95MS != nil && (slowest == nil || *h.P95MS > *slowest.P95MS) {
			slowest = &l.Hours[i]
		}
	}
	if slowest == nil {
		return fmt.Sprintf("No attempts in the last %d hours.", len(l.Hours))
	}
	noun := "attempts"
	if attempts == 1 {
		noun = "attempt"
	}
	return fmt.Sprintf("In the last %d hours: %d %s; the slowest hour, from %s UTC, took %d ms at the median and %d ms at the 95th percentile.",
		len(l.Hours), attempts, noun, slowest.Start.UTC().Format("15:04"), *slowest.P50MS, *slowest.P95MS)
}

// LatencyChart draws each hour's median and 95th percentile attempt
// duration as a pair of bars in SVG, on a scale up to the slowest 95th
// percentile. Like OutcomeChart it holds numbers and fixed words only.
func LatencyChart(l hubapi.AttemptLatency) template.HTML {
	const width, height, top, bottom = 720, 160, 10, 20
	var most int64 = 1
	for _, h := range l.Hours {
		if h.P95MS != nil {
			most = max(most, *h.P95MS)
		}
	}
	slot := float64(width) / float64(max(len(l.Hours), 1))
	scale := float64(height-top-bottom) / float64(most)
	var svg strings.Builder
	fmt.Fprintf(&svg, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-labelledby="latency-title"><title id="latency-title">%s</title>`,
		width, height, template.HTMLEscapeString(LatencySummary(l)))
	for i, h := range l.Hours {
		x := float64(i)*slot + slot*0.15
		if h.P50MS != nil && h.P95MS != nil {
			for j, part := range []struct {
				class string
				ms    int64
			}{{"p50", *h.P50MS}, {"p95", *h.P95MS}} {
				barHeight := max(float64(part.ms)*scale, 1) // a 0 ms hour still shows it had attempts
				fmt.Fprintf(&svg, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"></rect>`,
					part.class, x+float64(j)*slot*0.35, float64(height-bottom)-barHeight, slot*0.35, barHeight)
			}
		}
		if i%6 == 0 {
			fmt.Fprintf(&svg, `<text x="%.1f" y="%d">%s</text>`, x, height-5, h.Start.UTC().Format("15:04"))
		}
	}
	fmt.Fprintf(&svg, `<text x="%d" y="%d" text-anchor="end">%d ms</text>`, width-2, top+2, most)
	svg.WriteString(`</svg>`)
	return template.HTML(svg.String())
}
