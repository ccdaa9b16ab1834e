package hub_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hubctl/hubctl/internal/testutil/httprecord"
)

// operational is one operational event as a webhook received it.
type operational struct {
	key  string
	data map[string]any
}

// operationalEvents are the hub.* events among what a receiver got.
func operationalEvents(t *testing.T, s *httprecord.Server) []operational {
	t.Helper()
	var out []operational
	for _, r := range s.Requests() {
		key := r.Header.Get("X-Lerian-Event-Type")
		if len(key) < 4 || key[:4] != "hub." {
			continue
		}
		e := operational{key: key}
		if err := json.Unmarshal(r.Body, &e.data); err != nil {
			t.Fatalf("%s body %s: %v", key, r.Body, err)
		}
		out = append(out, e)
	}
	return out
}

// about are the events about one subscription, by key, in arrival order.
func about(events []operational, subscription string) map[string][]operational {
	out := map[string][]operational{}
	for _, e := range events {
		if e.data["subscription_id"] == subscription {
			out[e.key] = append(out[e.key], e)
		}
	}
	return out
}

func isVerification(r *http.Request) bool {
	return r.Header.Get("X-Lerian-Event-Type") == "hub.verification"
}

// TestOperationalEventsTellAnotherSubscriptionWhatHappensToAFailingOne:
// subscription A's receiver fails, recovers and fails for good, and
// subscription B, which wants hub.*, hears each step once: A failing, its
// exhausted dead letter (one report, with the count), its recovery, and
// its auto-disable (trigger automatic). A, which wants hub.* too, hears
// nothing about itself.
func TestOperationalEventsTellAnotherSubscriptionWhatHappensToAFailingOne(t *testing.T) {
	var failing atomic.Bool
	receiverA := httprecord.Start(t, httprecord.Options{Unrecorded: isVerification, Respond: func(w http.ResponseWriter, _ *http.Request, _ int) {
		if failing.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}})
	receiverB := httprecord.Start(t, httprecord.Options{Unrecorded: isVerification})
	h := startHubWith(t, map[string]string{
		"STREAMING_HUB_BREAKER_FAILURES":           "2",
		"STREAMING_HUB_BREAKER_COOLDOWN":           "100ms",
		"STREAMING_HUB_AUTODISABLE_FAILURE_WINDOW": "5s",
		"STREAMING_HUB_AUTODISABLE_FAILURE_SPREAD": "0s",
	}, postedKey)
	b := h.subscribe(subscription("activity", map[string]any{"type": "webhook", "url": receiverB.URL + "/activity"}, []string{"hub.*"}, nil))
	a := h.subscribe(subscription("orders", map[string]any{"type": "webhook", "url": receiverA.URL + "/orders"},
		[]string{"transaction.*", "hub.*"}, map[string]any{"retry_schedule": []string{"0s", "100ms", "100ms"}}))
	heard := func(key string, n int) []operational {
		t.Helper()
		var got []operational
		waitFor(t, "B to hear "+key+" about A", h.proc, func() bool {
			got = about(operationalEvents(t, receiverB), a.ID)[key]
			return len(got) >= n
		})
		return got
	}

	failing.Store(true)
	first := h.produce(postedKey, `{"n":1}`)
	failingEvents := heard("hub.subscription_failing", 1)
	if d := failingEvents[0].data; d["last_status"] != float64(503) || d["consecutive_failures"] != float64(2) || d["failing_since"] == nil {
		t.Errorf("subscription_failing data %v; want last_status 503 at the second consecutive failure", d)
	}
	dead := heard("hub.deliveries_dead_lettered", 1)
	if d := dead[0].data; d["reason"] != "exhausted" || d["count"] != float64(1) || !slices.Equal(toStrings(d["event_ids"]), []string{first}) {
		t.Errorf("deliveries_dead_lettered data %v; want one exhausted dead letter of event %s", d, first)
	}

	failing.Store(false)
	h.produce(postedKey, `{"n":2}`)
	heard("hub.subscription_recovered", 1)

	failing.Store(true)
	var disabled []operational
	waitFor(t, "A to be auto-disabled while its receiver keeps failing", h.proc, func() bool {
		disabled = about(operationalEvents(t, receiverB), a.ID)["hub.subscription_disabled"]
		if len(disabled) == 0 {
			// Each poll adds an event whose failures keep the span going.
			h.produce(postedKey, `{"n":3}`)
		}
		return len(disabled) > 0
	})
	if d := disabled[0].data; d["trigger"] != "automatic" || d["failing_since"] == nil || d["last_failure_at"] == nil {
		t.Errorf("subscription_disabled data %v; want trigger automatic with the failure span", d)
	}
	if actor, _ := disabled[0].data["actor"].(map[string]any); actor["kind"] != "hub" {
		t.Errorf("subscription_disabled actor %v, want the hub", actor)
	}

	got := about(operationalEvents(t, receiverB), a.ID)
	if n := len(got["hub.subscription_failing"]); n != 2 {
		t.Errorf("B heard subscription_failing %d times, want once per failure span (two spans)", n)
	}
	if n := len(got["hub.subscription_recovered"]); n != 1 {
		t.Errorf("B heard subscription_recovered %d times, want once", n)
	}
	exhaustedReports := 0
	for _, e := range got["hub.deliveries_dead_lettered"] {
		if e.data["reason"] == "exhausted" {
			exhaustedReports++
		}
	}
	if exhaustedReports != 1 {
		t.Errorf("B heard %d reports of exhausted dead letters within a minute, want one", exhaustedReports)
	}
	if own := about(operationalEvents(t, receiverA), a.ID); len(own) != 0 {
		t.Errorf("A heard about itself: %v", own)
	}
	if own := about(operationalEvents(t, receiverB), b.ID); len(own) != 0 {
		t.Errorf("B heard about itself: %v", own)
	}

	// The tenant's activity, over the API with its key: what B heard, and
	// A's creation by that key.
	var activity []string
	for line := range strings.Lines(mustRun(t, h.tenant, "", "activity", "--subscription", a.Name, "-o", "jsonl")) {
		var item struct {
			Type string
			Data struct{ Actor map[string]any }
		}
		decode(t, line, &item)
		activity = append(activity, item.Type+" "+fmt.Sprint(item.Data.Actor["kind"]))
	}
	if len(activity) < 5 || activity[0] != "hub.subscription_created api_key" || !slices.Contains(activity, "hub.subscription_recovered hub") {
		t.Errorf("A's activity: %v", activity)
	}
}

func toStrings(v any) []string {
	items, _ := v.([]any)
	out := make([]string, 0, len(items))
	for _, item := range items {
		s, _ := item.(string)
		out = append(out, s)
	}
	return out
}
