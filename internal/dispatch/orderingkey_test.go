package dispatch

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// recordingSink keeps the deliveries handed to it, by subscription.
type recordingSink struct {
	mu   *sync.Mutex
	sub  uuid.UUID
	seen map[uuid.UUID][]sink.Delivery
}

func (s recordingSink) Deliver(_ context.Context, d sink.Delivery) sink.Outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen[s.sub] = append(s.seen[s.sub], d)
	return sink.Outcome{OK: true}
}
func (recordingSink) Probe(context.Context, sink.ProbeRequest) error { return nil }
func (recordingSink) Close() error                                   { return nil }

// A sink receives a job's ordering key when its subscription orders, and
// none when it does not, even for events that have a subject.
func TestDeliveryCarriesTheOrderingKeyOfOrderedSubscriptionsOnly(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(*http.Request, int) int { return http.StatusOK })
	ordered, _ := e.webhookSub("acme", rc.URL, func(in *hubapi.SubscriptionCreate) { in.Ordering = "subject" })
	unordered, _ := e.webhookSub("acme", rc.URL)

	var mu sync.Mutex
	seen := map[uuid.UUID][]sink.Delivery{}
	events := e.insertOrderedJobs("acme", ordered, []string{"account-1", "account-2"}, 2)
	e.insertJobs("acme", unordered, 3)
	e.start(func(o *Options) {
		o.OpenSink = func(sub catalog.Subscription) (sink.Sink, error) {
			return recordingSink{mu: &mu, sub: sub.ID, seen: seen}, nil
		}
	})
	waitFor(t, "every job delivered", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen[ordered]) == len(events) && len(seen[unordered]) == 3
	})

	mu.Lock()
	defer mu.Unlock()
	for _, d := range seen[ordered] {
		if want := events[d.EventID].subject; d.OrderingKey != want {
			t.Errorf("ordered subscription: event %s delivered with ordering key %q, want its subject %q", d.EventID, d.OrderingKey, want)
		}
	}
	for _, d := range seen[unordered] {
		if d.OrderingKey != "" {
			t.Errorf("unordered subscription: event %s delivered with ordering key %q, want none", d.EventID, d.OrderingKey)
		}
	}
}
