package maintenance

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/store/queue"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/hubctl/hubctl/internal/store/lifecycle"
	"github.com/hubctl/hubctl/internal/store/oncall"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var discard = slog.New(slog.DiscardHandler)

// openStore opens a freshly migrated database of its own.
func openStore(t *testing.T) *storetest.Store {
	t.Helper()
	st, err := storetest.Connect(context.Background(), pgtest.DSN(t), pg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// subscription creates tenant with a subscription and returns its id.
func subscription(t *testing.T, st *storetest.Store, tenant string) string {
	t.Helper()
	var id string
	err := st.Pool.QueryRow(context.Background(), `
WITH t AS (INSERT INTO tenants (id) VALUES ($1) ON CONFLICT DO NOTHING)
INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, verification_state, signing_secret)
VALUES (gen_random_uuid(), $1, 'upkeep', 'webhook', 'https://example.com', '{*}', 'active', 'ciphertext')
RETURNING id::text`, tenant).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// exec runs a statement of the test's set-up.
func exec(t *testing.T, st *storetest.Store, sql string, args ...any) {
	t.Helper()
	if _, err := st.Pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// wakes counts the dispatcher's wake-ups; the rest does nothing.
type wakes struct {
	nopDispatcher
	n atomic.Int32
}

func (w *wakes) Wake() { w.n.Add(1) }

// gathered reads one series of a registry; ok is false when it is absent.
func gathered(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) (v float64, ok bool) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if matches(m, labels) {
				if m.Counter != nil {
					return m.Counter.GetValue(), true
				}
				return m.Gauge.GetValue(), true
			}
		}
	}
	return 0, false
}

func matches(m *dto.Metric, labels map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if want, ok := labels[l.GetName()]; ok {
			if want != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(labels)
}

func TestLeaseRecoveryReturnsExpiredJobsAndWakesTheDispatcher(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	sub := subscription(t, st, "acme")
	now := time.Now()
	exec(t, st, `
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, lease_owner, lease_until, created_at, updated_at)
VALUES (gen_random_uuid(), 'acme', $1, 1, 'in_flight', 'gone', $2, $2, $2),
       (gen_random_uuid(), 'acme', $1, 2, 'in_flight', 'alive', $3, $2, $2)`, sub, now.Add(-time.Minute), now.Add(time.Minute))
	reg := prometheus.NewPedanticRegistry()
	w := &wakes{}
	svc, err := leaseRecovery(Options{Queue: st.Queue, Lifecycle: st.Lifecycle, Registerer: reg, Dispatcher: w, PoisonThreshold: 5, Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.RunOnce(ctx, now); err != nil {
		t.Fatal(err)
	}
	var pending, inFlight int
	if err := st.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'pending' AND recoveries = 1), count(*) FILTER (WHERE state = 'in_flight' AND lease_owner = 'alive') FROM delivery_jobs`).Scan(&pending, &inFlight); err != nil {
		t.Fatal(err)
	}
	if pending != 1 || inFlight != 1 {
		t.Errorf("%d recovered and %d still in flight, want the expired one recovered and the live one kept", pending, inFlight)
	}
	if n, _ := gathered(t, reg, "streaming_hub_leases_recovered_total", map[string]string{"result": "retry"}); n != 1 {
		t.Errorf("leases_recovered_total{result=retry} = %v, want 1", n)
	}
	if w.n.Load() != 1 {
		t.Errorf("the dispatcher was woken %d times, want once", w.n.Load())
	}
	if err := svc.RunOnce(ctx, now); err != nil {
		t.Fatal(err)
	}
	if w.n.Load() != 1 {
		t.Error("a run that recovered nothing woke the dispatcher")
	}
}

func TestStrandedKeyReleaseMakesAParkedHeadDue(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	sub := subscription(t, st, "acme")
	now := time.Now()
	// The key's head is parked with nothing ahead of it: a release was
	// missed. The other key's parked job waits behind a live one.
	exec(t, st, `
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, ordering_key, next_attempt_at, created_at, updated_at)
VALUES (gen_random_uuid(), 'acme', $1, 1, 'pending', 'stranded', 'infinity', $2, $2),
       (gen_random_uuid(), 'acme', $1, 2, 'pending', 'waiting', $2, $2, $2),
       (gen_random_uuid(), 'acme', $1, 3, 'pending', 'waiting', 'infinity', $2, $2)`, sub, now.Add(-time.Minute))
	reg := prometheus.NewPedanticRegistry()
	w := &wakes{}
	svc, err := strandedKeyRelease(Options{Queue: st.Queue, Lifecycle: st.Lifecycle, Registerer: reg, Dispatcher: w, Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.RunOnce(ctx, now); err != nil {
		t.Fatal(err)
	}
	var parked []int64
	rows, err := st.Pool.Query(ctx, `SELECT event_seq FROM delivery_jobs WHERE next_attempt_at = 'infinity' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			t.Fatal(err)
		}
		parked = append(parked, seq)
	}
	if len(parked) != 1 || parked[0] != 3 {
		t.Errorf("parked after the sweep: %v, want only the job behind a live one (3)", parked)
	}
	if n, _ := gathered(t, reg, "streaming_hub_ordering_keys_swept_total", nil); n != 1 {
		t.Errorf("ordering_keys_swept_total = %v, want 1", n)
	}
	if w.n.Load() != 1 {
		t.Errorf("the dispatcher was woken %d times, want once", w.n.Load())
	}
}

func TestBacklogCountSetsTheGauges(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	now := time.Now()
	for tenant, n := range map[string]int{"big": 3, "small": 1, "tiny": 1} {
		sub := subscription(t, st, tenant)
		exec(t, st, `
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, next_attempt_at, created_at, updated_at)
SELECT gen_random_uuid(), $1, $2, g, 'pending', $3, $3, $3 FROM generate_series(1, $4) g`, tenant, sub, now.Add(-time.Minute), n)
	}
	exec(t, st, `UPDATE subscriptions SET enabled = false, disabled_reason = 'auto_disabled' WHERE tenant_id = 'tiny'`)
	reg := prometheus.NewPedanticRegistry()
	svc, err := backlogCount(Options{OnCall: st.OnCall, Registerer: reg, TenantLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.RunOnce(ctx, now); err != nil {
		t.Fatal(err)
	}
	if n, _ := gathered(t, reg, "streaming_hub_dispatch_due_jobs", nil); n != 5 {
		t.Errorf("dispatch_due_jobs = %v, want 5", n)
	}
	for tenant, want := range map[string]float64{"big": 3, OtherTenants: 2} {
		if n, ok := gathered(t, reg, "streaming_hub_delivery_backlog_jobs", map[string]string{"tenant": tenant}); !ok || n != want {
			t.Errorf("delivery_backlog_jobs{tenant=%s} = %v (present %v), want %v", tenant, n, ok, want)
		}
	}
	if age, _ := gathered(t, reg, "streaming_hub_delivery_oldest_due_age_seconds", map[string]string{"tenant": "big"}); age < 59 || age > 61 {
		t.Errorf("oldest due age of big = %vs, want 60s", age)
	}
	if n, _ := gathered(t, reg, "streaming_hub_subscriptions_autodisabled", nil); n != 1 {
		t.Errorf("subscriptions_autodisabled = %v, want 1", n)
	}
	if _, ok := gathered(t, reg, "streaming_hub_ordering_blocked_keys", nil); !ok {
		t.Error("ordering_blocked_keys is missing")
	}
}

func TestPartitionCreationComesBeforeTheSequenceMove(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	// Far enough ahead that no partition of the day exists yet.
	later := time.Now().Add(30 * 24 * time.Hour)
	o := Options{Queue: st.Queue, Lifecycle: st.Lifecycle}
	move, create := inboxSequenceMove(o), partitionCreation(o)
	if err := move.RunOnce(ctx, later); err != nil {
		t.Fatal(err)
	}
	if next := nextSeq(t, st); next >= pg.DaySeqBase(later) {
		t.Fatalf("the sequence moved to %d, into a day without its partition", next)
	}
	if err := create.RunOnce(ctx, later); err != nil {
		t.Fatal(err)
	}
	if err := move.RunOnce(ctx, later); err != nil {
		t.Fatal(err)
	}
	if next, want := nextSeq(t, st), pg.DaySeqBase(later); next != want {
		t.Errorf("the sequence's next value is %d, want the day's base %d", next, want)
	}
	// Ahead of the day too, so ingest never waits for one.
	status, err := st.StorageStatus(ctx, later, lifecycle.RetentionPolicy{Events: time.Hour, Deliveries: time.Hour, Quarantine: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, tbl := range status.Tables {
		if tbl.Partitions < lifecycle.PartitionsAhead+1 {
			t.Errorf("%s has %d partitions, want at least today's and %d ahead", tbl.Table, tbl.Partitions, lifecycle.PartitionsAhead)
		}
	}
}

// nextSeq is the inbox sequence's next value.
func nextSeq(t *testing.T, st *storetest.Store) int64 {
	t.Helper()
	var next int64
	if err := st.Pool.QueryRow(context.Background(),
		`SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM events_seq_seq`).Scan(&next); err != nil {
		t.Fatal(err)
	}
	return next
}

var week = lifecycle.RetentionPolicy{Events: 168 * time.Hour, Deliveries: 168 * time.Hour, Quarantine: 168 * time.Hour}

func TestRetentionPrunesUnderTheLockAndEveryInstanceRefreshesTheGauges(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	today := pg.DayStart(time.Now())
	if err := st.EnsurePartitions(ctx, today); err != nil {
		t.Fatal(err)
	}
	// Three quarantined records of today, which a clock ten days on finds
	// expired.
	exec(t, st, `
INSERT INTO quarantine (reason, topic, kafka_partition, kafka_offset, header_keys, header_values, value, value_size, value_sha256, received_at)
SELECT 'invalid_time', 'topic', 0, g, '{}', '{}', '\x00', 1, sha256('\x00'), $1 FROM generate_series(1, 3) g`, today.Add(time.Hour))
	reg := prometheus.NewPedanticRegistry()
	clock := today.Add(10 * 24 * time.Hour)
	o := Options{Queue: st.Queue, Lifecycle: st.Lifecycle, Registerer: reg, Retention: week, RetentionInterval: time.Minute, Logger: discard,
		Now: func() time.Time { return clock }}
	prune, err := retentionPrune(o)
	if err != nil {
		t.Fatal(err)
	}
	gauges, err := storageGauges(o)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(RunnerOptions{Lifecycle: st.Lifecycle, Registerer: reg, Now: o.Now}, []Service{prune, gauges})
	if err != nil {
		t.Fatal(err)
	}

	// Another process holds the lock: this one neither prunes nor waits,
	// but still refreshes its gauges.
	err = st.WithRetentionLock(ctx, func() error {
		if err := r.RunOnce(ctx, prune); err != lifecycle.ErrRetentionBusy {
			t.Errorf("prune with the lock held elsewhere: %v, want ErrRetentionBusy", err)
		}
		return r.RunOnce(ctx, gauges)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := gathered(t, reg, "streaming_hub_maintenance_runs_total", map[string]string{"service": "retention_prune", "outcome": "skipped"}); n != 1 {
		t.Errorf("runs_total{retention_prune,skipped} = %v, want 1", n)
	}
	if n := series(t, reg, "streaming_hub_storage_bytes"); n != 6 {
		t.Errorf("storage_bytes has %d tables, want 6", n)
	}
	if got, _ := gathered(t, reg, "streaming_hub_retention_dropped_rows_total", map[string]string{"table": "quarantine"}); got != 0 {
		t.Errorf("dropped %v rows without the lock", got)
	}

	if err := r.RunOnce(ctx, prune); err != nil {
		t.Fatalf("prune with the lock free: %v", err)
	}
	if err := r.RunOnce(ctx, gauges); err != nil {
		t.Fatal(err)
	}
	if got, _ := gathered(t, reg, "streaming_hub_retention_dropped_rows_total", map[string]string{"table": "quarantine"}); got != 3 {
		t.Errorf("dropped_rows_total{table=quarantine} = %v, want 3", got)
	}
	if got, _ := gathered(t, reg, "streaming_hub_retention_dropped_bytes_total", map[string]string{"table": "quarantine"}); got <= 0 {
		t.Errorf("dropped_bytes_total{table=quarantine} = %v, want the partition's size", got)
	}
	if got, _ := gathered(t, reg, "streaming_hub_retention_last_run_timestamp_seconds", nil); got != float64(clock.Unix()) {
		t.Errorf("last_run = %v, want %d", got, clock.Unix())
	}
	if _, ok := gathered(t, reg, "streaming_hub_storage_oldest_row_timestamp_seconds", map[string]string{"table": "quarantine"}); ok {
		t.Error("the oldest quarantine row after the prune has a series, want none (empty)")
	}
}

// series is how many series a metric family has.
func series(t *testing.T, reg *prometheus.Registry, name string) int {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return len(f.GetMetric())
		}
	}
	return 0
}

func TestHeartbeatStoresTheInstanceAndLeavesAtStop(t *testing.T) {
	st := openStore(t)
	ctx := context.Background()
	reg := prometheus.NewPedanticRegistry()
	open := []oncall.BreakerState{{Owner: "hub-1", TenantID: "acme", Destination: "https://example.com", State: "open", OpenUntil: time.Now().Add(time.Hour)}}
	subscription(t, st, "acme")
	svc := heartbeat(Options{OnCall: st.OnCall, Gatherer: reg, Dispatcher: breakers(open),
		Instance: oncall.Instance{Owner: "hub-1", Role: "all", Version: "test", StartedAt: time.Now()}})
	now := time.Now()
	if err := svc.RunOnce(ctx, now); err != nil {
		t.Fatal(err)
	}
	instances, err := st.OnCall.Instances(ctx, now, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(instances) != 1 || instances[0].Owner != "hub-1" || !instances[0].HeartbeatAt.Equal(now.Truncate(time.Microsecond)) {
		t.Fatalf("instances after a beat: %+v, want hub-1 beating at %s", instances, now)
	}
	var held int
	if err := st.Pool.QueryRow(ctx, `SELECT count(*) FROM breaker_states WHERE owner = 'hub-1'`).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if held != 1 {
		t.Errorf("%d stored breakers, want the open one", held)
	}
	svc.Stop(ctx)
	if instances, err = st.OnCall.Instances(ctx, now, time.Minute); err != nil || len(instances) != 0 {
		t.Errorf("instances after Stop: %+v (%v), want none", instances, err)
	}
}

// breakers is a dispatcher whose open breakers are fixed.
type breakers []oncall.BreakerState

func (b breakers) Wake()                                                     {}
func (b breakers) ReleaseOutwaited(context.Context, time.Time)               {}
func (b breakers) ForgetUnusedBreakers(context.Context, time.Time) error     { return nil }
func (b breakers) EvictIdleCaches(time.Time)                                 {}
func (b breakers) ReportDeadLetters(context.Context, time.Time) (int, error) { return 0, nil }
func (b breakers) ReportPoisoned(context.Context, pgx.Tx, []queue.Poisoned, time.Time) error {
	return nil
}
func (b breakers) Breakers() []oncall.BreakerState { return b }
