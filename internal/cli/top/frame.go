// Package top is `hubctl top`: a live view of one hub (its /metrics) or of
// every instance behind a database (their heartbeats), redrawn in place.
// This file is the frame: what two readings say, rendered with lipgloss;
// it does no I/O, so its output is tested against golden files.
package top

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/hubctl/hubctl/internal/cli/output"
	"github.com/hubctl/hubctl/internal/observe"
)

// Snapshot is one reading of the hub or hubs a frame shows.
type Snapshot struct {
	At observe.Reading
	// Instances are the running hubs, when the source knows them (the
	// database); empty for a single hub read over HTTP.
	Instances []Instance
	// Breakers are the open and half-open breakers, when the source knows
	// them by destination (the database); else only the count in Stats.
	Breakers []Breaker
	// Fleet is true when the source lists the running instances (the
	// database), so that none running is worth saying.
	Fleet bool
}

// Instance is one running hub.
type Instance struct {
	Owner   string
	Role    string
	Version string
	Age     time.Duration // since its last heartbeat
}

// Breaker is one open or half-open breaker.
type Breaker struct {
	Tenant, Destination, State string
	Until                      time.Time
	Instances                  int
}

// Frame is what one redraw shows.
type Frame struct {
	Source   string
	At       time.Time
	Interval time.Duration // between the two readings rates come from; 0 for the first

	Instances []Instance
	Fleet     bool

	IngestRate   map[string]float64 // records/s by verdict
	DeliveryRate map[string]float64 // attempts/s by outcome
	LatencyP50   float64            // produce→delivered over the interval, seconds; NaN when nothing was delivered
	LatencyP99   float64

	Backlog      []observe.TenantBacklog
	BreakersOpen float64
	Breakers     []Breaker
	AutoDisabled float64
	Lag          []observe.PartitionLag
}

// NewFrame compares two snapshots of the same source; prev may be the
// zero Snapshot (no rates yet).
func NewFrame(source string, prev, cur Snapshot) Frame {
	f := Frame{
		Source: source, At: cur.At.At, Instances: cur.Instances, Fleet: cur.Fleet,
		IngestRate: map[string]float64{}, DeliveryRate: map[string]float64{},
		LatencyP50: math.NaN(), LatencyP99: math.NaN(),
		Backlog: cur.At.Stats.Backlog, BreakersOpen: cur.At.Stats.BreakersOpen, Breakers: cur.Breakers,
		AutoDisabled: cur.At.Stats.AutoDisabled, Lag: cur.At.Stats.Lag,
	}
	if prev.At.At.IsZero() || !cur.At.At.After(prev.At.At) {
		return f
	}
	f.Interval = cur.At.At.Sub(prev.At.At)
	secs := f.Interval.Seconds()
	rates := func(now, then map[string]float64, into map[string]float64) {
		for k, v := range now {
			into[k] = max(v-then[k], 0) / secs
		}
	}
	rates(cur.At.Stats.Ingest, prev.At.Stats.Ingest, f.IngestRate)
	rates(cur.At.Stats.Deliveries, prev.At.Stats.Deliveries, f.DeliveryRate)
	window := cur.At.Stats.Latency.Since(prev.At.Stats.Latency)
	f.LatencyP50, f.LatencyP99 = window.Quantile(0.5), window.Quantile(0.99)
	return f
}

// Limits of what one frame lists; the rest is summarised.
const (
	maxBacklogRows = 10
	maxBreakerRows = 8
	maxLagRows     = 12
)

// styles are the frame's lipgloss styles; with a renderer that has no
// colour (a pipe, --once into a file, the golden tests) they only lay out.
type styles struct {
	title, heading, dim, bad, warn, good lipgloss.Style
}

func newStyles(r *lipgloss.Renderer) styles {
	return styles{
		title:   r.NewStyle().Bold(true),
		heading: r.NewStyle().Bold(true).Underline(true),
		dim:     r.NewStyle().Faint(true),
		bad:     r.NewStyle().Foreground(lipgloss.Color("1")).Bold(true),
		warn:    r.NewStyle().Foreground(lipgloss.Color("3")),
		good:    r.NewStyle().Foreground(lipgloss.Color("2")),
	}
}

// Render lays a frame out for a terminal width columns wide.
func Render(f Frame, r *lipgloss.Renderer, width int) string {
	s := newStyles(r)
	var b strings.Builder
	line := func(parts ...string) { b.WriteString(strings.Join(parts, "") + "\n") }

	header := fmt.Sprintf("hubctl top — %s — %s", f.Source, f.At.UTC().Format("2006-01-02 15:04:05Z"))
	if f.Interval > 0 {
		header += fmt.Sprintf(" — rates over %s", f.Interval.Round(100*time.Millisecond))
	}
	line(s.title.Render(output.Cut(header, width)))
	if len(f.Instances) > 0 {
		roles := map[string]int{}
		for _, in := range f.Instances {
			roles[in.Role]++
		}
		noun := "instances"
		if len(f.Instances) == 1 {
			noun = "instance"
		}
		line(s.dim.Render(fmt.Sprintf("%d %s (%s)", len(f.Instances), noun, countList(roles))))
	} else if f.Fleet {
		line(s.warn.Render("no hub has reported to this database in the last " + observe.StaleAfter.String()))
	}
	line("")

	line(s.heading.Render("Ingest"))
	if f.Interval == 0 {
		line("  rates after the next reading")
	} else {
		accepted, discarded, quarantined := f.IngestRate["accept"], f.IngestRate["discard"], f.IngestRate["quarantine"]
		q := rate(quarantined)
		if quarantined > 0 {
			q = s.warn.Render(q)
		}
		line(fmt.Sprintf("  %s records/s   accepted %s   discarded %s   quarantined %s",
			rate(accepted+discarded+quarantined), rate(accepted), rate(discarded), q))
	}
	line("")

	line(s.heading.Render("Delivery"))
	if f.Interval == 0 {
		line("  rates after the next reading")
	} else {
		ok, failed := f.DeliveryRate["succeeded"], f.DeliveryRate["failed"]
		fl := rate(failed)
		if failed > 0 {
			fl = s.bad.Render(fl)
		}
		line(fmt.Sprintf("  %s attempts/s   succeeded %s   failed %s   produce→delivered p50 %s   p99 %s",
			rate(ok+failed), rate(ok), fl, seconds(f.LatencyP50), seconds(f.LatencyP99)))
	}
	breakers := fmt.Sprintf("%g", f.BreakersOpen)
	if f.BreakersOpen > 0 {
		breakers = s.bad.Render(breakers)
	}
	disabled := fmt.Sprintf("%g", f.AutoDisabled)
	if f.AutoDisabled > 0 {
		disabled = s.warn.Render(disabled)
	}
	line(fmt.Sprintf("  open breakers %s   auto-disabled subscriptions %s", breakers, disabled))
	line("")

	line(s.heading.Render("Backlog by tenant"))
	if len(f.Backlog) == 0 {
		line(s.good.Render("  nothing queued"))
	} else {
		var rows [][]string
		for i, t := range f.Backlog {
			if i == maxBacklogRows {
				rows = append(rows, []string{fmt.Sprintf("… %d more", len(f.Backlog)-maxBacklogRows)})
				break
			}
			age := "—"
			if t.Due > 0 {
				age = duration(t.OldestDueSeconds)
				if t.OldestDueSeconds >= 300 {
					age = s.bad.Render(age)
				} else if t.OldestDueSeconds >= 30 {
					age = s.warn.Render(age)
				}
			}
			rows = append(rows, []string{output.SafeText(t.Tenant, 0), count(t.Pending), count(t.Due), age})
		}
		table(&b, backlogColumns, rows, width, s)
	}
	line("")

	if len(f.Breakers) > 0 {
		line(s.heading.Render("Open breakers"))
		var rows [][]string
		for i, br := range f.Breakers {
			if i == maxBreakerRows {
				rows = append(rows, []string{fmt.Sprintf("… %d more", len(f.Breakers)-maxBreakerRows)})
				break
			}
			rows = append(rows, []string{output.SafeText(br.Tenant, 0), output.SafeText(br.Destination, 0), s.bad.Render(br.State),
				br.Until.UTC().Format("15:04:05Z"), strconv.Itoa(br.Instances)})
		}
		table(&b, breakerColumns, rows, width, s)
		line("")
	}

	line(s.heading.Render("Kafka consumer lag"))
	if len(f.Lag) == 0 {
		line(s.dim.Render("  no partitions reported"))
	} else {
		lag := append([]observe.PartitionLag(nil), f.Lag...)
		sort.SliceStable(lag, func(i, j int) bool { return lag[i].Records > lag[j].Records })
		total := 0.0
		for _, l := range lag {
			total += l.Records
		}
		var rows [][]string
		for i, l := range lag {
			if i == maxLagRows {
				rows = append(rows, []string{fmt.Sprintf("… %d more", len(lag)-maxLagRows)})
				break
			}
			v := count(l.Records)
			if l.Records > 0 {
				v = s.warn.Render(v)
			}
			rows = append(rows, []string{output.SafeText(l.Topic, 0), strconv.Itoa(l.Partition), v})
		}
		table(&b, lagColumns, rows, width, s)
		line(fmt.Sprintf("  total %s records behind over %s", count(total), output.Count(len(lag), "partition", "partitions")))
	}
	return b.String()
}

// The sections' tables follow the rule of every table (output.Fit): on a
// narrow terminal the least telling columns go first, and names are cut
// rather than the lines wrapped.
var (
	backlogColumns = []output.Column{
		{Name: "tenant", Priority: 9, Min: 12},
		{Name: "queued", Priority: 6},
		{Name: "due", Priority: 7},
		{Name: "oldest due", Priority: 8},
	}
	breakerColumns = []output.Column{
		{Name: "tenant", Priority: 8, Min: 12},
		{Name: "destination", Priority: 9, Min: 20},
		{Name: "state", Priority: 7},
		{Name: "until", Priority: 6},
		{Name: "instances", Priority: 5},
	}
	// Topics share their start (lerian.streaming.…): the end tells them apart.
	lagColumns = []output.Column{
		{Name: "topic", Priority: 9, Min: 20, KeepEnd: true},
		{Name: "partition", Priority: 8},
		{Name: "lag", Priority: 7},
	}
)

// tableIndent sets a section's table under its heading.
const tableIndent = "  "

// table writes a section's table laid out by output.Lines for what is
// left of width (0: no limit) after the indent, its header dimmed.
func table(b *strings.Builder, cols []output.Column, rows [][]string, width int, s styles) {
	if width > 0 {
		width = max(width-len(tableIndent), 1)
	}
	for i, line := range output.Lines(cols, rows, width) {
		if i == 0 {
			line = s.dim.Render(line)
		}
		b.WriteString(tableIndent + line + "\n")
	}
}

func countList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func rate(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v < 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return count(v)
}

// count renders a non-negative quantity with k and M suffixes.
func count(v float64) string {
	switch {
	case v >= 10_000_000:
		return strconv.FormatFloat(v/1e6, 'f', 0, 64) + "M"
	case v >= 1_000_000:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + "M"
	case v >= 10_000:
		return strconv.FormatFloat(v/1e3, 'f', 0, 64) + "k"
	}
	return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
}

func seconds(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return duration(v)
}

// duration renders seconds the way an operator reads a wait: 850ms, 4.2s,
// 3m10s, 2h05m.
func duration(secs float64) string {
	d := time.Duration(secs * float64(time.Second))
	switch {
	case d < time.Second:
		return strconv.Itoa(int(d.Milliseconds())) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(secs, 'f', 1, 64) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
