// Package oprelay produces the operational events kept in the outbox to
// STREAMING_HUB_OPERATIONAL_TOPIC (docs/operational-events.md): one relay
// at a time across instances, at least once, in each tenant's order.
package oprelay

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	opstore "github.com/hubctl/hubctl/internal/store/opevents"
)

// relayLockKey is the session advisory lock the relaying instance holds;
// its value spells "hubrel" in ASCII.
const relayLockKey int64 = 0x6875_6272_656c

const (
	// batch bounds the events one pass produces.
	batch = 500
	// DefaultInterval spaces the passes of an idle relay, and a standby
	// instance's tries to take over.
	DefaultInterval = 250 * time.Millisecond
)

// Options configure a Relay.
type Options struct {
	Pool     *pgxpool.Pool
	Producer *kgo.Client // produces to Topic; the relay closes nothing
	Topic    string
	Logger   *slog.Logger
	// Registerer receives the relay's metrics; nil leaves them unregistered.
	Registerer prometheus.Registerer
	// Interval spaces idle passes; 0 means DefaultInterval.
	Interval time.Duration
}

// Relay moves the outbox to the topic.
type Relay struct {
	o       Options
	lag     prometheus.Gauge
	relayed prometheus.Counter
}

// New builds a relay; nothing runs before Run.
func New(o Options) (*Relay, error) {
	if o.Pool == nil || o.Producer == nil || o.Topic == "" {
		return nil, errors.New("operational relay: a pool, a producer and a topic are required")
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Logger = o.Logger.With(slog.String("component", "operational_relay"))
	r := &Relay{o: o,
		lag: prometheus.NewGauge(prometheus.GaugeOpts{Name: "streaming_hub_operational_relay_lag_seconds",
			Help: "Age of the oldest operational event not yet produced to STREAMING_HUB_OPERATIONAL_TOPIC, as the relaying instance last saw it; 0 when none waits."}),
		relayed: prometheus.NewCounter(prometheus.CounterOpts{Name: "streaming_hub_operational_events_relayed_total",
			Help: "Operational events produced to STREAMING_HUB_OPERATIONAL_TOPIC (at least once: a relay that stopped before deleting produces again)."}),
	}
	if o.Registerer != nil {
		for _, c := range []prometheus.Collector{r.lag, r.relayed} {
			if err := o.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("operational relay: register metrics: %w", err)
			}
		}
	}
	return r, nil
}

// Run relays until ctx ends: while another instance holds the relay lock
// it stands by, trying again every interval.
func (r *Relay) Run(ctx context.Context) error {
	failing := false
	for {
		err := r.lead(ctx)
		if ctx.Err() != nil {
			return nil
		}
		switch {
		case err != nil && !failing:
			r.o.Logger.Warn("operational relay stopped; trying again", "error", err)
		case err == nil && failing:
			r.o.Logger.Info("operational relay resumed")
		}
		failing = err != nil
		if !sleep(ctx, r.o.Interval) {
			return nil
		}
	}
}

// lead takes the relay lock on a connection of its own and relays while it
// holds it. The connection is closed at the end, never returned to the
// pool: the lock goes with it, whatever ended the lead.
func (r *Relay) lead(ctx context.Context) error {
	conn, err := r.o.Pool.Acquire(ctx)
	if err != nil {
		return err
	}
	own := conn.Hijack()
	defer own.Close(context.WithoutCancel(ctx))
	var leader bool
	if err := own.QueryRow(ctx, tryRelayLockSQL, pgx.StrictNamedArgs{"relay_lock_key": relayLockKey}).Scan(&leader); err != nil || !leader {
		return err
	}
	for {
		n, err := r.pass(ctx, own)
		if err != nil {
			return err
		}
		if n < batch && !sleep(ctx, r.o.Interval) {
			return nil
		}
	}
}

// pass produces the oldest events below the ingest horizon, in seq order,
// and deletes them once the broker acknowledged every one. Reading below
// the horizon keeps a tenant's order: an event whose transaction commits
// later with a lower seq is never passed by one with a higher seq.
func (r *Relay) pass(ctx context.Context, conn *pgx.Conn) (int, error) {
	var horizon int64
	if err := conn.QueryRow(ctx, readHorizonSQL).Scan(&horizon); err != nil {
		return 0, fmt.Errorf("read the ingest horizon: %w", err)
	}
	rows, err := conn.Query(ctx, readOutboxSQL, pgx.StrictNamedArgs{"horizon": horizon, "limit": batch})
	if err != nil {
		return 0, fmt.Errorf("read the outbox: %w", err)
	}
	var (
		seqs    []int64
		records []*kgo.Record
		oldest  time.Time
	)
	var (
		seq                          int64
		e                            opstore.Event
		tenant, key, ceType, subject string
		id                           uuid.UUID
		at                           time.Time
		payload                      []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&seq, &tenant, &id, &key, &ceType, &subject, &at, &payload}, func() error {
		if oldest.IsZero() {
			oldest = at
		}
		e = opstore.Event{ID: id, TenantID: tenant, Key: key, Type: ceType, Time: at, Data: payload}
		seqs = append(seqs, seq)
		records = append(records, Record(r.o.Topic, e, subject))
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("read the outbox: %w", err)
	}
	if len(records) == 0 {
		r.lag.Set(0)
		return 0, nil
	}
	r.lag.Set(max(time.Since(oldest).Seconds(), 0))
	if err := r.o.Producer.ProduceSync(ctx, records...).FirstErr(); err != nil {
		return 0, fmt.Errorf("produce %d operational events to %s: %w", len(records), r.o.Topic, err)
	}
	if _, err := conn.Exec(ctx, deleteOutboxSQL, pgx.StrictNamedArgs{"seqs": seqs}); err != nil {
		return 0, fmt.Errorf("delete %d relayed operational events: %w", len(seqs), err)
	}
	r.relayed.Add(float64(len(records)))
	return len(records), nil
}

// Record is an operational event as the topic carries it: CloudEvents in
// binary content mode per the Kafka protocol binding (ce_ headers, the
// data as the value), keyed by tenant so each tenant's events stay in one
// partition, in order.
func Record(topic string, e opstore.Event, subject string) *kgo.Record {
	resource, eventType, _ := strings.Cut(e.Key, ".")
	header := func(k, v string) kgo.RecordHeader { return kgo.RecordHeader{Key: k, Value: []byte(v)} }
	return &kgo.Record{Topic: topic, Key: []byte(e.TenantID), Value: e.Data, Headers: []kgo.RecordHeader{
		header("ce_specversion", "1.0"),
		header("ce_id", e.ID.String()),
		header("ce_source", opstore.Source),
		header("ce_type", e.Type),
		header("ce_time", e.Time.UTC().Format(time.RFC3339Nano)),
		header("ce_subject", subject),
		header("ce_tenantid", e.TenantID),
		header("ce_schemaversion", opstore.SchemaVersion),
		header("ce_resourcetype", resource),
		header("ce_eventtype", eventType),
		header("content-type", opstore.DataContentType),
	}}
}

// sleep waits d or until ctx ends, reporting whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

//go:embed sql/try_relay_lock.sql
var tryRelayLockSQL string

//go:embed sql/read_horizon.sql
var readHorizonSQL string

//go:embed sql/read_outbox.sql
var readOutboxSQL string

//go:embed sql/delete_outbox.sql
var deleteOutboxSQL string
