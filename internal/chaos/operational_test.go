//go:build linux

package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/hubctl/hubctl/internal/testutil/wait"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// operationalTopic is where the scenario's hub relays operational events.
const operationalTopic = "hub.operational"

// changes makes operational events through the API while the hub is killed
// and restarted: each round creates a pull subscription, disables,
// enables and deletes it, and remembers the events of every change the
// hub acknowledged, in the order it made them.
type changes struct {
	w    *world
	stop chan struct{}
	done chan struct{}

	mu     sync.Mutex
	acked  map[string][]string // subscription id → event keys, in order
	nacked int                 // acknowledged changes, all subscriptions
}

func startChanges(w *world) *changes {
	c := &changes{w: w, stop: make(chan struct{}), done: make(chan struct{}), acked: map[string][]string{}}
	go c.run()
	return c
}

func (c *changes) run() {
	defer close(c.done)
	for n := 0; ; n++ {
		select {
		case <-c.stop:
			return
		default:
		}
		c.round(n)
	}
}

// round walks one subscription through its changes. A change the hub did
// not acknowledge (it was killed, or was not back yet) is tried again
// until it is, so a subscription's acknowledged events keep their order;
// a change that committed unacknowledged may be reported too.
func (c *changes) round(n int) {
	ctx := context.Background()
	var id string
	for _, step := range []struct {
		key string
		do  func() error
	}{
		{"hub.subscription_created", func() error {
			sub, err := c.w.tenant.CreateSubscription(ctx, "", hubapi.SubscriptionCreate{
				Name: fmt.Sprintf("ops %d", n), Sink: json.RawMessage(`{"type":"pull"}`), EventTypes: []string{"hub.*"},
			})
			id = sub.ID
			return err
		}},
		{"hub.subscription_disabled", func() error { _, err := c.w.tenant.DisableSubscription(ctx, "", id); return err }},
		{"hub.subscription_enabled", func() error { _, err := c.w.tenant.EnableSubscription(ctx, "", id); return err }},
		{"hub.subscription_deleted", func() error { _, err := c.w.tenant.DeleteSubscription(ctx, "", id); return err }},
	} {
		for step.do() != nil {
			select {
			case <-c.stop:
				return
			case <-time.After(50 * time.Millisecond): // the hub is down or restarting
			}
		}
		c.mu.Lock()
		c.acked[id] = append(c.acked[id], step.key)
		c.nacked++
		c.mu.Unlock()
	}
}

// acknowledged is how many changes the hub has acknowledged so far.
func (c *changes) acknowledged() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nacked
}

func (c *changes) halt() map[string][]string {
	close(c.stop)
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.acked
}

// relayed is one record of the operational topic.
type relayed struct {
	id, key, subject, tenant string
}

// readTopic reads the whole operational topic from its start.
func (w *world) readTopic(ctx context.Context) []relayed {
	w.t.Helper()
	client, err := kgo.NewClient(kgo.SeedBrokers(w.kafka.Brokers()...), kgo.ConsumeTopics(operationalTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		w.t.Fatal(err)
	}
	defer client.Close()
	var out []relayed
	for {
		pollCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fetches := client.PollFetches(pollCtx)
		cancel()
		if fetches.NumRecords() == 0 {
			return out
		}
		fetches.EachRecord(func(r *kgo.Record) {
			e := relayed{tenant: string(r.Key)}
			for _, h := range r.Headers {
				switch h.Key {
				case "ce_id":
					e.id = string(h.Value)
				case "ce_type":
					e.key = strings.TrimPrefix(string(h.Value), "studio.lerian.")
				case "ce_subject":
					e.subject = string(h.Value)
				}
			}
			out = append(out, e)
		})
	}
}

// TestChaosOperationalTopicUnderSIGKILL kills `hubctl serve` while
// control-plane changes keep making operational events and the relay
// produces them to STREAMING_HUB_OPERATIONAL_TOPIC: every event of an
// acknowledged change reaches the topic at least once, none is lost, and
// each subscription's events arrive in the order they happened.
func TestChaosOperationalTopicUnderSIGKILL(t *testing.T) {
	prelude(t)
	n := rounds(t)
	w := newWorld(t, worldOptions{instanceID: staticID, operationalTopic: operationalTopic})
	c := startChanges(w)
	for range n {
		// Kill while changes flow: a few acknowledged since the restart,
		// then at a random moment of the relay's work.
		since := c.acknowledged()
		wait.Poll{Patience: patience}.Until(t, "changes acknowledged since the restart", func() bool { return c.acknowledged() >= since+4 })
		time.Sleep(time.Duration(rand.IntN(500)) * time.Millisecond)
		w.kill()
		w.restart()
		if _, err := w.waitReady(time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	acked := c.halt()
	wait.Poll{Patience: patience}.Until(t, "the outbox relayed", func() bool { return w.count(`SELECT count(*) FROM operational_outbox`) == 0 })

	got := w.readTopic(t.Context())
	firsts := map[string][]string{} // subject → keys at their first arrival, in topic order
	seen := map[string]bool{}
	for _, e := range got {
		if e.tenant != tenant {
			t.Fatalf("record keyed %q, want the tenant %q", e.tenant, tenant)
		}
		if seen[e.id] {
			continue
		}
		seen[e.id] = true
		firsts[e.subject] = append(firsts[e.subject], e.key)
	}
	events := 0
	for id, keys := range acked {
		events += len(keys)
		relayedKeys := firsts[id]
		// Every acknowledged change is on the topic in its order; a change
		// the hub committed but could not acknowledge may come after them.
		if len(relayedKeys) < len(keys) || strings.Join(relayedKeys[:len(keys)], ",") != strings.Join(keys, ",") {
			t.Errorf("subscription %s: topic has %v, want %v first", id, relayedKeys, keys)
		}
	}
	if events == 0 {
		t.Fatal("no change was acknowledged")
	}
	t.Logf("%d kills: %d acknowledged changes of %d subscriptions; %d records on the topic, %d distinct",
		n, events, len(acked), len(got), len(seen))
}
