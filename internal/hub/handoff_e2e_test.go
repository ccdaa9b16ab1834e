package hub_test

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// metricValue reads one unlabelled series from serve's /metrics.
func metricValue(t *testing.T, base, name string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		if value, ok := strings.CutPrefix(lines.Text(), name+" "); ok {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("%s = %q: %v", name, value, err)
			}
			return v
		}
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("/metrics has no %s", name)
	return 0
}

// serve runs ingest and delivery in one process: the first attempts of
// the events it ingests go to its own dispatcher without a claim
// (docs/architecture.md, "First attempts handed over").
func TestServeHandsFirstAttemptsToItsOwnDispatcher(t *testing.T) {
	hook := newWebhookRecorder(t)
	h := startHub(t, postedKey)
	sub := h.subscribe(subscription("handed", map[string]any{"type": "webhook", "url": hook.server.URL + "/hooks"}, []string{postedKey}, nil))
	var events []string
	for range 3 {
		id := h.produce(postedKey, `{"amount":1}`)
		events = append(events, id)
		succeeded(t, h.settled(sub, len(events)), id, postedKey)
	}
	if n := metricValue(t, h.base, "streaming_hub_jobs_handed_over_total"); n < 1 {
		t.Errorf("streaming_hub_jobs_handed_over_total = %v after %d events delivered one at a time; want them handed over", n, len(events))
	}
}
