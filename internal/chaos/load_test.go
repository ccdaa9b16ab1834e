//go:build linux

package chaos

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/pkg/client"
	"github.com/hubctl/hubctl/pkg/hubapi"
	"github.com/hubctl/hubctl/pkg/webhook"
)

const (
	topic  = "lerian.streaming.midaz_transaction.posted"
	tenant = "chaos"
	// produceEvery paces the producer: about a hundred events a second,
	// enough to keep every partition busy at any kill.
	produceEvery = 10 * time.Millisecond
	// invalidEvery makes one record in so many malformed: it must be
	// quarantined, and never reach the inbox.
	invalidEvery = 25
)

// producer writes events to Kafka continuously until stopped, and remembers
// every one the broker acknowledged. A record that fails is sent again
// until it is acknowledged, so one that reached the log with its
// acknowledgement lost is in the log twice: the hub must store it once.
type producer struct {
	client *kgo.Client
	stopCh chan struct{}
	done   chan struct{}
	// subjects, when set, are given to the events in turn, and each
	// record is keyed by its subject, as a producer that needs a subject's
	// events in order keys them (docs/concepts.md, Ordering).
	subjects []string

	mu        sync.Mutex
	valid     []string
	invalid   int
	subjectOf map[string]string // valid event id -> its subject
}

func startProducer(brokers []string, subjects []string) (*producer, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordDeliveryTimeout(5*time.Second))
	if err != nil {
		return nil, err
	}
	p := &producer{client: cl, stopCh: make(chan struct{}), done: make(chan struct{}), subjects: subjects,
		subjectOf: make(map[string]string)}
	go p.run()
	return p, nil
}

func (p *producer) run() {
	defer close(p.done)
	tick := time.NewTicker(produceEvery)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-p.stopCh:
			return
		case <-tick.C:
		}
		id := uuid.Must(uuid.NewV7()).String()
		valid := n%invalidEvery != 0
		subject := ""
		if len(p.subjects) > 0 {
			subject = p.subjects[n%len(p.subjects)]
		}
		rec := record(id, valid, subject)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := p.client.ProduceSync(ctx, rec).FirstErr()
			cancel()
			if err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
			rec = record(id, valid, subject) // a failed record cannot be produced again
		}
		p.mu.Lock()
		if valid {
			p.valid = append(p.valid, id)
			if subject != "" {
				p.subjectOf[id] = subject
			}
		} else {
			p.invalid++
		}
		p.mu.Unlock()
	}
}

// stop ends production once the record in hand is acknowledged.
func (p *producer) stop() {
	select {
	case <-p.stopCh:
	default:
		close(p.stopCh)
	}
	<-p.done
	p.client.Close()
}

func (p *producer) produced() (valid []string, invalid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.valid...), p.invalid
}

// subjects is what the producer had given each acknowledged valid event
// when the load stopped.
func (p *producer) subjectsOf() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]string, len(p.subjectOf))
	for id, s := range p.subjectOf {
		out[id] = s
	}
	return out
}

// record is a transaction.posted CloudEvent of tenant chaos; an invalid one
// lacks its id, which quarantines it. With a subject, the record carries
// it and is keyed by it; otherwise it is keyed by its id.
func record(id string, valid bool, subject string) *kgo.Record {
	h := func(k, v string) kgo.RecordHeader { return kgo.RecordHeader{Key: k, Value: []byte(v)} }
	headers := []kgo.RecordHeader{
		h("ce-specversion", "1.0"), h("ce-source", "midaz"),
		h("ce-type", "studio.lerian.transaction.posted"), h("ce-time", time.Now().UTC().Format(time.RFC3339Nano)),
		h("ce-schemaversion", "1.0.0"), h("ce-resourcetype", "transaction"), h("ce-eventtype", "posted"),
		h("ce-tenantid", tenant),
	}
	if valid {
		headers = append(headers, h("ce-id", id))
	}
	key := id
	if subject != "" {
		headers = append(headers, h("ce-subject", subject))
		key = subject
	}
	return &kgo.Record{Topic: topic, Key: []byte(key), Value: []byte(`{"amount":1000}`), Headers: headers}
}

// receiver is a webhook destination on loopback: it verifies every
// signature, counts deliveries per event, and can hang.
type receiver struct {
	srv    *httptest.Server
	secret string

	inflight atomic.Int32
	hanging  atomic.Bool
	release  chan struct{} // closed when a hang ends
	// fast answers at once, without the few milliseconds of work a
	// delivery otherwise takes: the hub delivers as fast as it can.
	fast atomic.Bool

	mu       sync.Mutex
	arrivals map[string][]time.Time // verified deliveries per event id, by arrival
	forged   int
}

func startReceiver(secret string) *receiver {
	r := &receiver{secret: secret, arrivals: make(map[string][]time.Time), release: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	_, ok := readVerified(w, req, r.secret, func() {
		r.mu.Lock()
		r.forged++
		r.mu.Unlock()
	})
	if !ok {
		return
	}
	arrived := time.Now()
	r.inflight.Add(1)
	defer r.inflight.Add(-1)
	if r.hanging.Load() {
		r.mu.Lock()
		release := r.release
		r.mu.Unlock()
		select {
		case <-release:
		case <-req.Context().Done():
			return // the hub gave up on this attempt: not delivered
		}
	}
	// A few milliseconds per delivery leave attempts in flight at any
	// moment, for kills to land in.
	if !r.fast.Load() {
		time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
	}
	r.mu.Lock()
	id := req.Header.Get(webhook.HeaderEventID)
	// Stamped when the request arrived: one the hub sent just before it
	// was killed may finish after its restart, and must not count as the
	// restarted hub's.
	r.arrivals[id] = append(r.arrivals[id], arrived)
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// hang makes every delivery wait until recover is called or the hub gives
// up on it.
func (r *receiver) hang() {
	r.mu.Lock()
	r.release = make(chan struct{})
	r.mu.Unlock()
	r.hanging.Store(true)
}

func (r *receiver) recover() {
	r.hanging.Store(false)
	r.mu.Lock()
	close(r.release)
	r.mu.Unlock()
}

// firstAfter is when the first delivery after t arrived.
func (r *receiver) firstAfter(t time.Time) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var first time.Time
	for _, times := range r.arrivals {
		for _, at := range times {
			if at.After(t) && (first.IsZero() || at.Before(first)) {
				first = at
			}
		}
	}
	return first, !first.IsZero()
}

func (r *receiver) snapshot() (map[string][]time.Time, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]time.Time, len(r.arrivals))
	for id, times := range r.arrivals {
		out[id] = append([]time.Time(nil), times...)
	}
	return out, r.forged
}

// puller follows a pull subscription the way a careful consumer does: it
// asks for the events after the last seq it has seen, so a read whose
// answer was lost (the hub killed mid-response) is read again.
type puller struct {
	client *client.Client
	sub    string
	stopCh chan struct{}
	done   chan struct{}

	mu         sync.Mutex
	last       int64
	seen       map[string]int
	outOfOrder int
}

func startPuller(c *client.Client, sub string) *puller {
	p := &puller{client: c, sub: sub, stopCh: make(chan struct{}), done: make(chan struct{}), seen: make(map[string]int)}
	go p.run()
	return p
}

func (p *puller) run() {
	defer close(p.done)
	for {
		select {
		case <-p.stopCh:
			return
		default:
		}
		p.mu.Lock()
		after := p.last
		p.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		page, err := p.client.ReadEvents(ctx, "", p.sub, hubapi.PullParams{Limit: 500, After: &after})
		cancel()
		if err != nil { // the hub or its database is down: read again
			time.Sleep(100 * time.Millisecond)
			continue
		}
		p.mu.Lock()
		for _, e := range page.Items {
			if e.Seq <= p.last {
				p.outOfOrder++
			}
			p.last = max(p.last, e.Seq)
			p.seen[e.CEID]++
		}
		p.mu.Unlock()
		if len(page.Items) < 500 {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func (p *puller) stop() {
	select {
	case <-p.stopCh:
	default:
		close(p.stopCh)
	}
	<-p.done
}

func (p *puller) snapshot() (map[string]int, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.seen))
	for k, v := range p.seen {
		out[k] = v
	}
	return out, p.outOfOrder
}

// readVerified reads a delivery and checks its signature; forged counts a
// refused one. It answers refused requests and the verification probe
// itself, and reports whether there is a delivery left to handle.
func readVerified(w http.ResponseWriter, req *http.Request, secret string, forged func()) (body []byte, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, webhook.DefaultMaxBodyBytes))
	if err != nil {
		return nil, false
	}
	if err := webhook.VerifyRequest(req, body, []string{secret}, time.Now(), webhook.DefaultTolerance); err != nil {
		forged()
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return nil, false
	}
	if req.Header.Get(webhook.HeaderEventType) == webhook.VerificationEventType {
		w.WriteHeader(http.StatusNoContent)
		return nil, false
	}
	return body, true
}
