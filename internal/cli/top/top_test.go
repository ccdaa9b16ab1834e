package top_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/iostreams"
	"github.com/hubctl/hubctl/internal/cli/top"
	"github.com/hubctl/hubctl/internal/observe"
	"github.com/hubctl/hubctl/internal/store/oncall"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestFlagsReachTheOptions(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios, LookupEnv: func(name string) (string, bool) {
		if name == "HUBCTL_SERVER" {
			return "http://127.0.0.1:8080", true
		}
		return "", false
	}}
	var got *top.Options
	cmd := top.NewCmd(f, func(_ context.Context, o *top.Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--once", "--interval", "5s"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || !got.Once || got.Interval != 5*time.Second || got.Server != "http://127.0.0.1:8080" {
		t.Fatalf("options %+v, want once, 5s, the server from HUBCTL_SERVER", got)
	}

	cmd = top.NewCmd(f, func(context.Context, *top.Options) error { return nil })
	cmd.SetArgs([]string{"--interval", "1ms"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--interval must be at least 100ms") {
		t.Fatalf("a 1ms interval gave %v", err)
	}
}

// heartbeat stores one instance's stats and breakers as serve does.
func heartbeat(t *testing.T, st *storetest.Store, owner, role string, stats observe.Stats, breakers ...oncall.BreakerState) {
	t.Helper()
	raw, err := json.Marshal(stats)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	in := oncall.Instance{Owner: owner, Role: role, Version: "test", StartedAt: now.Add(-time.Minute), HeartbeatAt: now, Stats: raw}
	if err := st.OnCall.Heartbeat(context.Background(), in, breakers, observe.StaleAfter); err != nil {
		t.Fatal(err)
	}
}

func TestDatabaseSourceSeesEveryInstance(t *testing.T) {
	ctx := context.Background()
	st, err := storetest.Connect(ctx, pgtest.DSN(t), pg.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dest := "https://hooks.acme.example:443"
	// Breakers are stored only for a destination some subscription delivers to.
	if _, err := st.Pool.Exec(ctx, `
INSERT INTO tenants (id) VALUES ('acme');
INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, verification_state, signing_secret)
VALUES ('0190b6a2-7c1e-7d3a-9f00-000000000001', 'acme', 's', 'webhook', 'https://hooks.acme.example:443', '{*}', 'active', 'x');
INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time, header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
SELECT 'acme', gen_random_uuid(), 'a.b', '1', 1, 's', 't', now(), '{}', '{}', '{}', 't', 0, g FROM generate_series(1, 3) g;
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, next_attempt_at)
SELECT gen_random_uuid(), 'acme', '0190b6a2-7c1e-7d3a-9f00-000000000001', seq, now() - interval '90 seconds' FROM events`); err != nil {
		t.Fatal(err)
	}
	heartbeat(t, st, "hub-a", "ingest", observe.Stats{
		Ingest: map[string]float64{"accept": 100, "quarantine": 2},
		Lag:    []observe.PartitionLag{{Topic: "t", Partition: 0, Records: 7}},
	})
	heartbeat(t, st, "hub-b", "delivery", observe.Stats{Deliveries: map[string]float64{"succeeded": 40, "failed": 5}},
		oncall.BreakerState{TenantID: "acme", Destination: dest, State: "open", OpenUntil: time.Now().Add(time.Minute)})
	heartbeat(t, st, "hub-c", "delivery", observe.Stats{Deliveries: map[string]float64{"succeeded": 2}},
		oncall.BreakerState{TenantID: "acme", Destination: dest, State: "open", OpenUntil: time.Now().Add(time.Minute)})
	// The next heartbeat replaces the instance's stats and breakers.
	heartbeat(t, st, "hub-c", "delivery", observe.Stats{Deliveries: map[string]float64{"succeeded": 10}},
		oncall.BreakerState{TenantID: "acme", Destination: dest, State: "half_open", OpenUntil: time.Now().Add(2 * time.Minute)})
	// An instance whose heartbeat stopped is not counted, nor its breakers.
	stale, _ := json.Marshal(observe.Stats{Ingest: map[string]float64{"accept": 1e6}})
	if err := st.OnCall.Heartbeat(ctx, oncall.Instance{Owner: "hub-dead", Role: "all", Version: "old", StartedAt: time.Now().Add(-time.Hour),
		HeartbeatAt: time.Now().Add(-time.Minute), Stats: stale}, []oncall.BreakerState{{TenantID: "acme", Destination: "x", State: "open", OpenUntil: time.Now().Add(time.Hour)}}, time.Hour); err != nil {
		t.Fatal(err)
	}

	snap, err := top.NewDatabaseSource(st.OnCall, time.Now).Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Instances) != 3 {
		t.Fatalf("%d instances, want the 3 live ones: %+v", len(snap.Instances), snap.Instances)
	}
	s := snap.At.Stats
	if s.Ingest["accept"] != 100 || s.Deliveries["succeeded"] != 50 || s.Deliveries["failed"] != 5 || len(s.Lag) != 1 || s.Lag[0].Records != 7 {
		t.Errorf("merged stats %+v", s)
	}
	if len(s.Backlog) != 1 || s.Backlog[0].Tenant != "acme" || s.Backlog[0].Due != 3 || s.Backlog[0].OldestDueSeconds < 85 {
		t.Errorf("backlog %+v, want acme with 3 due for about 90s", s.Backlog)
	}
	if len(snap.Breakers) != 1 || snap.Breakers[0].State != "open" || snap.Breakers[0].Instances != 2 || s.BreakersOpen != 1 {
		t.Errorf("breakers %+v (%v open), want acme's destination open on 2 instances", snap.Breakers, s.BreakersOpen)
	}
}

func TestMetricsSourceReadsOneHub(t *testing.T) {
	reg := prometheus.NewRegistry()
	records := prometheus.NewCounterVec(prometheus.CounterOpts{Name: observe.MetricIngestRecords}, []string{"verdict", "reason"})
	lag := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: observe.MetricKafkaLag}, []string{"topic", "partition"})
	backlog := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: observe.MetricBacklog}, []string{"tenant"})
	reg.MustRegister(records, lag, backlog)
	records.WithLabelValues("accept", "").Add(12)
	records.WithLabelValues("discard", "unknown_tenant").Add(3)
	lag.WithLabelValues("t", "2").Set(40)
	backlog.WithLabelValues("acme").Set(9)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	snap, err := top.NewMetricsSource(srv.URL, nil).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s := snap.At.Stats
	if s.Ingest["accept"] != 12 || s.Ingest["discard"] != 3 || len(s.Lag) != 1 || s.Lag[0].Partition != 2 || s.Lag[0].Records != 40 ||
		len(s.Backlog) != 1 || s.Backlog[0].Pending != 9 {
		t.Errorf("stats %+v", s)
	}
}

// TestOnceFromTheDatabase runs the command as an operator would: one frame
// of every instance behind the database, plain text.
func TestOnceFromTheDatabase(t *testing.T) {
	dsn := pgtest.DSN(t)
	st, err := storetest.Connect(context.Background(), dsn, pg.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// A running hub heartbeats on; --once waits for a newer heartbeat than
	// its first reading so that its rates are real.
	beats := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for accepted := 5.0; ; accepted += 10 {
			raw, _ := json.Marshal(observe.Stats{Ingest: map[string]float64{"accept": accepted}})
			now := time.Now()
			in := oncall.Instance{Owner: "hub-a", Role: "all", Version: "test", StartedAt: now, HeartbeatAt: now, Stats: raw}
			if err := st.OnCall.Heartbeat(context.Background(), in, nil, observe.StaleAfter); err != nil {
				t.Errorf("heartbeat: %v", err)
				return
			}
			select {
			case <-beats:
				return
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()
	res := clitest.Run(t, clitest.Database(dsn), "top", "--once", "--interval", "200ms")
	close(beats)
	<-done
	if res.Code != 0 {
		t.Fatalf("top --once exited %d: %s", res.Code, res.Stderr)
	}
	for _, want := range []string{"hubctl top — database (all instances)", "1 instance (all 1)", "Backlog by tenant", "nothing queued", "Kafka consumer lag", "accepted "} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("frame lacks %q:\n%s", want, res.Stdout)
		}
	}
	if strings.Contains(res.Stdout, "\x1b[") {
		t.Errorf("--once into a pipe carries escape sequences:\n%q", res.Stdout)
	}
}
