package ingest

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/event"
)

func TestVerdictSamplerOneLinePerKeyPerWindow(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s := newVerdictSampler(time.Minute)
	unknown := verdictKey{kind: event.Discard, reason: event.ReasonUnknownTenant, tenant: "t-ghost"}
	other := verdictKey{kind: event.Discard, reason: event.ReasonUnknownTenant, tenant: "t-other"}
	poison := verdictKey{kind: event.Quarantine, reason: event.ReasonMissingID}

	if !s.note(unknown, t0) {
		t.Fatal("a key's first record is not logged at once")
	}
	for i := range 999 {
		if s.note(unknown, t0.Add(time.Duration(i)*time.Millisecond)) {
			t.Fatal("a record inside the window was logged")
		}
	}
	if !s.note(other, t0.Add(time.Second)) || !s.note(poison, t0.Add(2*time.Second)) {
		t.Fatal("another tenant or reason shares a window")
	}
	if got := s.due(t0.Add(59 * time.Second)); len(got) != 0 {
		t.Fatalf("lines before the window ended: %+v", got)
	}
	got := s.due(t0.Add(time.Minute + 2*time.Second))
	if len(got) != 1 || got[0].key != unknown || got[0].count != 999 {
		t.Fatalf("after a minute: %+v, want one line for %v with 999", got, unknown)
	}
	// The window that just opened counts on; the empty ones were forgotten.
	if s.note(unknown, t0.Add(61*time.Second)) {
		t.Fatal("a record in the next window of a busy key was logged at once")
	}
	if !s.note(other, t0.Add(62*time.Second)) {
		t.Fatal("a quiet key's next record is not logged at once")
	}
	if got := s.due(t0.Add(2*time.Minute + 2*time.Second)); len(got) != 1 || got[0].count != 1 || got[0].key != unknown {
		t.Fatalf("second window: %+v", got)
	}
}

func TestVerdictSamplerBoundsTenants(t *testing.T) {
	now := time.Now()
	s := newVerdictSampler(time.Minute)
	for i := range maxVerdictLogKeys + 500 {
		s.note(verdictKey{kind: event.Discard, reason: event.ReasonUnknownTenant, tenant: fmt.Sprintf("t-%d", i)}, now)
	}
	if len(s.keys) != maxVerdictLogKeys+1 {
		t.Fatalf("%d keys tracked, want %d and the overflow key", len(s.keys), maxVerdictLogKeys)
	}
	over := s.keys[verdictKey{kind: event.Discard, reason: event.ReasonUnknownTenant, tenant: overflowTenant}]
	if over == nil || over.count != 499 {
		t.Fatalf("overflow key %+v, want the 500 records past the bound (first logged, 499 counted)", over)
	}
}

func TestVerdictLogLines(t *testing.T) {
	var buf bytes.Buffer
	l := newVerdictLog(slog.New(slog.NewTextHandler(&buf, nil)))
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	k := verdictKey{kind: event.Discard, reason: event.ReasonUnknownTenant, tenant: "t-ghost"}
	for i := range 5 {
		l.record(k, "lerian.streaming.tx", 3, int64(100+i), t0)
	}
	l.flush(t0.Add(time.Minute))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), buf.String())
	}
	for i, want := range []string{
		`msg="record discarded" reason=unknown_tenant tenant_id=t-ghost count=1 topic=lerian.streaming.tx partition=3 offset=100`,
		`msg="records discarded" reason=unknown_tenant tenant_id=t-ghost count=4 window=1m0s`,
	} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d = %s\nwant it to contain %s", i, lines[i], want)
		}
	}
}

func TestPartitionLag(t *testing.T) {
	cases := []struct {
		name               string
		end, stored, start int64
		hasStored          bool
		want               int64
	}{
		{"caught up", 100, 100, 0, true, 0},
		{"behind", 150, 100, 0, true, 50},
		{"nothing stored yet", 150, 0, 20, false, 130},
		{"stored past the end (recreated topic)", 10, 100, 0, true, 0},
	}
	for _, c := range cases {
		if got := partitionLag(c.end, c.stored, c.start, c.hasStored); got != c.want {
			t.Errorf("%s: lag %d, want %d", c.name, got, c.want)
		}
	}
}
