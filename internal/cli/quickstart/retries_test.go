package quickstart_test

import (
	"encoding/json"
	"strings"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// retriesSecret signs the subscription whose receiver fails on purpose.
const retriesSecret = "whsec_quickstart-retries-0123456789"

// received is what `hubctl listen -o json` prints per request, the part
// checked here.
type received struct {
	EventType  string `json:"event_type"`
	EventID    string `json:"event_id"`
	DeliveryID string `json:"delivery_id"`
	Verdict    string `json:"verdict"`
	Duplicate  bool   `json:"duplicate"`
	Status     int    `json:"status"`
}

// deliveriesOf decodes a listen -o json output and keeps those of event.
func (s *session) deliveriesOf(stdout, event string) []received {
	var out []received
	for line := range strings.Lines(stdout) {
		var r received
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			s.t.Fatalf("listen -o json printed a line that is not JSON: %q", line)
		}
		if r.EventID == event {
			out = append(out, r)
		}
	}
	return out
}

// retriesAndReplay points a subscription with a short retry schedule at a
// receiver that fails everything, and checks the three attempts arrive as
// one event id under three delivery ids; then that the exhausted delivery
// is listed as a dead letter and, replayed, delivered to a healthy receiver
// on the same address.
func (s *session) retriesAndReplay() {
	t := s.t
	failing := clitest.Start(t, s.env, "listen", "--addr", "127.0.0.1:0", "--secret", retriesSecret,
		"--fail-rate", "1", "--status", "503", "-o", "json")
	url := s.await("the failing receiver's address", failing, listeningLine)
	addr := strings.TrimPrefix(url, "http://")

	run := func(args ...string) string {
		t.Helper()
		res := clitest.Run(t, s.env, args...)
		if res.Code != 0 {
			t.Fatalf("hubctl %v exited %d:\n%s%s", args, res.Code, res.Stdout, res.Stderr)
		}
		return res.Stdout
	}
	var sub hubapi.Subscription
	if err := json.Unmarshal([]byte(run("subs", "create", "--name", "retries", "--type", "webhook", "--url", url,
		"--event-types", "payment.*", "--signing-secret", retriesSecret, "--retry-schedule", "0s,1s,1s")), &sub); err != nil {
		t.Fatal(err)
	}
	event := strings.TrimSpace(run("events", "produce", "--brokers", s.brokers, "--tenant", "default", "--type", "payment.failed"))

	var attempts []received
	s.waitFor("three attempts at the failing receiver", func() bool {
		attempts = s.deliveriesOf(failing.Stdout(), event)
		return len(attempts) >= 3
	})
	deliveryIDs := map[string]bool{}
	for i, a := range attempts {
		deliveryIDs[a.DeliveryID] = true
		if a.Verdict != "ok" || a.Status != 503 || a.Duplicate != (i > 0) || a.EventType != "payment.failed" {
			t.Errorf("attempt %d: %+v; want verified, answered 503, a duplicate after the first", i+1, a)
		}
	}
	if len(deliveryIDs) != len(attempts) || len(attempts) != 3 {
		t.Errorf("attempts %+v: want 3, each with its own delivery id", attempts)
	}

	var dead hubapi.Page[hubapi.DeadLetter]
	s.waitFor("the exhausted delivery in dlq list", func() bool {
		if err := json.Unmarshal([]byte(run("dlq", "list", "--subscription", sub.ID, "-o", "json")), &dead); err != nil {
			t.Fatal(err)
		}
		return len(dead.Items) == 1
	})
	if d := dead.Items[0]; d.EventID != event || d.Reason != hubapi.DeadExhausted || d.Attempts != 3 || d.LastStatus == nil || *d.LastStatus != 503 {
		t.Errorf("dead letter %+v", d)
	}

	// A healthy receiver takes the failing one's place; the replay reaches it.
	if code := failing.Stop(patience); code != 0 {
		t.Errorf("listen exited %d on Ctrl-C:\n%s", code, failing.Stderr())
	}
	healthy := clitest.Start(t, s.env, "listen", "--addr", addr, "--secret", retriesSecret, "-o", "json")
	s.await("the healthy receiver", healthy, listeningLine)
	var replayed hubapi.DeadLetterReplayResult
	if err := json.Unmarshal([]byte(run("dlq", "replay", "--subscription", sub.ID, "--yes", "-o", "json")), &replayed); err != nil {
		t.Fatal(err)
	}
	if replayed != (hubapi.DeadLetterReplayResult{Matched: 1, Replayed: 1}) {
		t.Errorf("replay = %+v", replayed)
	}
	var redelivered []received
	s.waitFor("the replayed delivery at the healthy receiver", func() bool {
		redelivered = s.deliveriesOf(healthy.Stdout(), event)
		return len(redelivered) > 0
	})
	if r := redelivered[0]; r.Verdict != "ok" || r.Status != 200 || deliveryIDs[r.DeliveryID] {
		t.Errorf("replayed delivery %+v; want verified, answered 200, under a new delivery id", r)
	}
}
