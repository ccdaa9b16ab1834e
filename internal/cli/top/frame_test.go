package top

import (
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/hubctl/hubctl/internal/observe"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func plainRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	return r
}

// latency is a produce→delivered histogram with count observations spread
// over the given buckets (cumulative counts).
func latency(counts ...float64) observe.Histogram {
	return observe.Histogram{Bounds: []float64{0.05, 0.1, 0.5, 1, 5, math.Inf(1)}, Counts: counts, Count: counts[len(counts)-1]}
}

// goldenSnapshots are two readings ten seconds apart of a hub with a
// backlog, a broken destination and a lagging partition.
func goldenSnapshots() (prev, cur Snapshot) {
	t0 := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
	prev = Snapshot{At: observe.Reading{At: t0, Stats: observe.Stats{
		Ingest:     map[string]float64{"accept": 10_000, "discard": 200, "quarantine": 3},
		Deliveries: map[string]float64{"succeeded": 9_000, "failed": 40},
		Latency:    latency(100, 4000, 8800, 8950, 9000, 9000),
	}}}
	cur = Snapshot{
		At: observe.Reading{At: t0.Add(10 * time.Second), Stats: observe.Stats{
			Ingest:     map[string]float64{"accept": 22_500, "discard": 260, "quarantine": 5},
			Deliveries: map[string]float64{"succeeded": 21_000, "failed": 140},
			Latency:    latency(100, 10000, 20000, 20800, 21000, 21000),
			Backlog: []observe.TenantBacklog{
				{Tenant: "acme", Pending: 48_210, Due: 1_200, OldestDueSeconds: 422},
				{Tenant: "globex", Pending: 350, Due: 12, OldestDueSeconds: 41.5},
				{Tenant: "initech", Pending: 20, Due: 0},
				{Tenant: "other", Pending: 9, Due: 3, OldestDueSeconds: 0.8},
			},
			BreakersOpen: 2,
			AutoDisabled: 1,
			Lag: []observe.PartitionLag{
				{Topic: "lerian.streaming.midaz_transaction.posted", Partition: 0, Records: 0},
				{Topic: "lerian.streaming.midaz_transaction.posted", Partition: 1, Records: 15_300},
				{Topic: "lerian.streaming.midaz_balance.changed", Partition: 0, Records: 4},
			},
		}},
		Instances: []Instance{
			{Owner: "hub-a/1/aa", Role: "all", Version: "v1.4.0", Age: time.Second},
			{Owner: "hub-b/1/bb", Role: "delivery", Version: "v1.4.0", Age: 2 * time.Second},
		},
		Breakers: []Breaker{
			{Tenant: "acme", Destination: "https://hooks.acme.example:443", State: "open", Until: t0.Add(40 * time.Second), Instances: 2},
		},
	}
	return prev, cur
}

func TestFrameGolden(t *testing.T) {
	prev, cur := goldenSnapshots()
	for _, c := range []struct {
		name   string
		prev   Snapshot
		cur    Snapshot
		source string
		width  int
	}{
		{"frame.golden", prev, cur, "database (all instances)", 100},
		{"first_frame.golden", Snapshot{}, cur, "database (all instances)", 100},
		{"idle.golden", Snapshot{}, Snapshot{At: observe.Reading{At: cur.At.At}}, "http://127.0.0.1:8080", 80},
		{"narrow.golden", prev, cur, "database (all instances)", 52},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Render(NewFrame(c.source, c.prev, c.cur), plainRenderer(), c.width)
			path := filepath.Join("testdata", c.name)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("frame differs from %s (go test -run TestFrameGolden -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
			}
		})
	}
}

// TestFrameTablesFitANarrowTerminal: the sections' tables follow the rule
// of every table, so none of their lines is wider than the terminal; the
// least telling columns go and names are cut, topics from the left.
func TestFrameTablesFitANarrowTerminal(t *testing.T) {
	prev, cur := goldenSnapshots()
	const width = 52
	out := Render(NewFrame("database (all instances)", prev, cur), plainRenderer(), width)
	_, tables, ok := strings.Cut(out, "Backlog by tenant\n")
	if !ok {
		t.Fatalf("no backlog section:\n%s", out)
	}
	for line := range strings.Lines(tables) {
		if w := lipgloss.Width(strings.TrimSuffix(line, "\n")); w > width {
			t.Errorf("a table line is %d wide on a %d-column terminal: %q", w, width, line)
		}
	}
	for _, want := range []string{"  …treaming.midaz_transaction.posted", "https://hooks.acme.exam…"} {
		if !strings.Contains(tables, want) {
			t.Errorf("no %q in the narrow tables:\n%s", want, tables)
		}
	}
	if strings.Contains(tables, "INSTANCES") {
		t.Errorf("the breakers' least telling column is still shown at %d columns:\n%s", width, tables)
	}
}

func TestFrameRates(t *testing.T) {
	prev, cur := goldenSnapshots()
	f := NewFrame("x", prev, cur)
	if f.Interval != 10*time.Second || f.IngestRate["accept"] != 1250 || f.DeliveryRate["failed"] != 10 {
		t.Errorf("interval %v, accept %v/s, failed %v/s; want 10s, 1250/s, 10/s", f.Interval, f.IngestRate["accept"], f.DeliveryRate["failed"])
	}
	// 12,000 deliveries in the interval, 6,000 of them within 0.1s; the
	// 99th percentile (rank 11,880) falls 30 into the 150 of (1s, 5s].
	if f.LatencyP50 != 0.1 || math.Abs(f.LatencyP99-1.8) > 1e-9 {
		t.Errorf("latency p50 %v p99 %v; want 0.1 and 1.8", f.LatencyP50, f.LatencyP99)
	}
	// A restarted process (counters lower than before) gives no negative rates.
	restarted := NewFrame("x", cur, prev)
	if restarted.Interval != 0 {
		t.Errorf("readings out of order gave rates over %v", restarted.Interval)
	}
}

func TestFrameColoursOnATerminal(t *testing.T) {
	prev, cur := goldenSnapshots()
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI256)
	if out := Render(NewFrame("x", prev, cur), r, 100); !strings.Contains(out, "\x1b[") {
		t.Error("no ANSI styling on a colour terminal")
	}
}
