package hub_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// eventCounter answers every delivery 200 and counts them by event id.
type eventCounter struct {
	server *httptest.Server
	mu     sync.Mutex
	seen   map[string]int
}

func newEventCounter(t *testing.T) *eventCounter {
	c := &eventCounter{seen: map[string]int{}}
	c.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Lerian-Event-Type") != "hub.verification" {
			c.mu.Lock()
			c.seen[r.Header.Get("X-Lerian-Event-Id")]++
			c.mu.Unlock()
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(c.server.Close)
	return c
}

func (c *eventCounter) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.seen))
	for k, v := range c.seen {
		out[k] = v
	}
	return out
}

// TestRecoverSendsWhatADisabledSubscriptionMissedOnce: events produced
// while a webhook was disabled reach it after recover, each exactly once,
// and nothing it already had comes again; the dry run counts the same.
func TestRecoverSendsWhatADisabledSubscriptionMissedOnce(t *testing.T) {
	hook := newEventCounter(t)
	h := startHub(t, postedKey)
	sub := h.subscribe(subscription("recovered", map[string]any{"type": "webhook", "url": hook.server.URL + "/hooks"}, []string{postedKey}, nil))
	since := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339Nano)

	var before, missed, after []string
	for range 3 {
		before = append(before, h.produce(postedKey, `{"phase":"before"}`))
	}
	h.settled(sub, 3)
	mustRun(t, h.tenant, "", "subs", "disable", sub.ID)
	for range 4 {
		missed = append(missed, h.produce(postedKey, `{"phase":"disabled"}`))
	}
	for _, id := range missed {
		waitFor(t, "event "+id+" in the inbox", h.proc, func() bool {
			return clitest.Run(t, h.tenant, "events", "get", id, "-o", "json").Code == 0
		})
	}
	mustRun(t, h.tenant, "", "subs", "enable", sub.ID)
	for range 2 {
		after = append(after, h.produce(postedKey, `{"phase":"after"}`))
	}
	h.settled(sub, 5)
	if got := hook.counts(); len(got) != 5 {
		t.Fatalf("before recover the receiver saw %v, want the 5 events of enabled times", got)
	}

	var dry, done, again hubapi.SubscriptionRecoverResult
	decode(t, mustRun(t, h.tenant, "", "subs", "recover", sub.Name, "--since", since, "--dry-run", "-o", "json"), &dry)
	if dry != (hubapi.SubscriptionRecoverResult{Matched: 4, DryRun: true}) {
		t.Fatalf("dry run = %+v, want 4 matched", dry)
	}
	decode(t, mustRun(t, h.tenant, "", "subs", "recover", sub.ID, "--since", since, "-o", "json"), &done)
	if done != (hubapi.SubscriptionRecoverResult{Matched: dry.Matched, Queued: dry.Matched}) {
		t.Fatalf("recover = %+v, want the dry run's %d matched, all queued", done, dry.Matched)
	}
	h.settled(sub, 9)
	decode(t, mustRun(t, h.tenant, "", "subs", "recover", sub.ID, "--since", "10m", "-o", "json"), &again)
	if again != (hubapi.SubscriptionRecoverResult{}) {
		t.Errorf("recover again = %+v, want nothing left to recover", again)
	}
	// The receiver counts an attempt before it answers, and the hub settles
	// a delivery only after the answer: with the nine settled and nothing
	// more queued, the counts are final.
	h.settled(sub, 9)
	got := hook.counts()
	for _, group := range [][]string{before, missed, after} {
		for _, id := range group {
			if got[id] != 1 {
				t.Errorf("event %s reached the receiver %d times, want once", id, got[id])
			}
		}
	}
	if len(got) != 9 {
		t.Errorf("the receiver saw %d events, want 9: %v", len(got), got)
	}
}
