package top

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli/iostreams"
	"github.com/hubctl/hubctl/internal/observe"
	"github.com/hubctl/hubctl/internal/testutil/syncbuf"
)

// fakeSource counts up one accepted record per reading, a second apart.
type fakeSource struct {
	mu    sync.Mutex
	reads int
	t0    time.Time
}

func (f *fakeSource) Name() string { return "fake" }

func (f *fakeSource) Read(context.Context) (Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return Snapshot{At: observe.Reading{At: f.t0.Add(time.Duration(f.reads) * time.Second),
		Stats: observe.Stats{Ingest: map[string]float64{"accept": float64(f.reads * 10)}}}}, nil
}

func TestLiveViewRedrawsInPlaceAndQuitsOnQ(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	out := &syncbuf.Buffer{}
	keys, typed := io.Pipe()
	ios.In, ios.Out = keys, out
	ios.SetStdoutTTY(true)
	src := &fakeSource{t0: time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)}
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), RunOptions{IO: ios, Source: src, Interval: 20 * time.Millisecond})
	}()

	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(out.String(), cursorHome) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than 3 frames drawn:\n%q", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := typed.Write([]byte("q")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("q did not quit the view")
	}
	got := out.String()
	if !strings.HasPrefix(got, enterAltScreen) || !strings.HasSuffix(got, leaveAltScreen) {
		t.Errorf("the view does not use the alternate screen and give it back:\n%q", got)
	}
	if !strings.Contains(got, "10 records/s") || !strings.Contains(got, "q quits") {
		t.Errorf("frames lack the rate or the key help:\n%q", got)
	}
	if strings.Contains(got, "\x1b[2J") {
		t.Error("frames clear the whole screen (flicker) instead of redrawing in place")
	}
}

func TestLiveViewNeedsATerminal(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	err := Run(context.Background(), RunOptions{IO: ios, Source: &fakeSource{}, Interval: time.Second})
	if err == nil || !strings.Contains(err.Error(), "use --once") {
		t.Fatalf("live view into a pipe: %v", err)
	}
}

func TestAdvanceKeepsRatesBetweenHeartbeats(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
	at := func(sec int, accepted float64, backlog float64) Snapshot {
		return Snapshot{At: observe.Reading{At: t0.Add(time.Duration(sec) * time.Second), Stats: observe.Stats{
			Ingest: map[string]float64{"accept": accepted}, Backlog: []observe.TenantBacklog{{Tenant: "a", Pending: backlog}}}}}
	}
	older, newer := advance(Snapshot{}, Snapshot{}, at(0, 0, 1))
	older, newer = advance(older, newer, at(5, 50, 2))
	// The same heartbeat read again, with a fresher backlog.
	older, newer = advance(older, newer, at(5, 50, 3))
	f := NewFrame("x", older, newer)
	if f.IngestRate["accept"] != 10 || f.Interval != 5*time.Second || f.Backlog[0].Pending != 3 {
		t.Errorf("rate %v over %v, backlog %v; want 10/s over 5s and the fresh backlog 3", f.IngestRate["accept"], f.Interval, f.Backlog[0].Pending)
	}
}
