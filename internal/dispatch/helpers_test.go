package dispatch

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hubctl/hubctl/internal/config"
	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/ingest"
	"github.com/hubctl/hubctl/internal/maintenance"
	"github.com/hubctl/hubctl/internal/service"
	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/pull"
	"github.com/hubctl/hubctl/internal/sink/webhook"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/store/queue"
	"github.com/hubctl/hubctl/internal/testutil/httprecord"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/internal/testutil/storetest"
	"github.com/hubctl/hubctl/internal/testutil/wait"
	"github.com/hubctl/hubctl/pkg/hubapi"
	whsign "github.com/hubctl/hubctl/pkg/webhook"
)

// TestMain stops the PostgreSQL server pgtest may start for this package.
func TestMain(m *testing.M) { pgtest.Main(m) }

const waitTimeout = 20 * time.Second

// env is one test's database, keyring and subscription service.
type env struct {
	t     testing.TB
	store *storetest.Store
	keys  *crypto.Keyring
	// subs creates subscriptions and opens sinks that may reach loopback.
	subs *service.Subscriptions
	// reap and tenantLimit configure the delivery maintenance services
	// start runs beside each dispatcher, as serve does.
	reap        time.Duration
	tenantLimit int
}

func newEnv(t testing.TB) *env {
	t.Helper()
	st, err := storetest.Connect(context.Background(), pgtest.DSN(t), pg.Options{MaxConns: 20})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(st.Close)
	kek := make([]byte, 32)
	_, _ = rand.Read(kek)
	keys, err := crypto.ParseKeyring(base64.StdEncoding.EncodeToString(kek))
	if err != nil {
		t.Fatalf("keyring: %v", err)
	}
	e := &env{t: t, store: st, keys: keys, reap: 50 * time.Millisecond}
	e.subs = e.subscriptions(true)
	return e
}

// subscriptions returns the subscription service over webhooks that may or
// may not reach private addresses.
func (e *env) subscriptions(allowPrivate bool) *service.Subscriptions {
	hooks := webhook.NewType(webhook.Options{AllowPrivate: allowPrivate})
	e.t.Cleanup(hooks.CloseIdleConnections)
	reg, err := sink.NewRegistry(hooks, pull.NewType())
	if err != nil {
		e.t.Fatal(err)
	}
	return service.NewSubscriptions(e.store.Catalog, e.store.Queue, e.store.OnCall, e.keys, reg, service.SubscriptionOptions{RotationOverlap: time.Hour})
}

func (e *env) tenant(id string) {
	e.t.Helper()
	if _, err := e.store.Pool.Exec(context.Background(), `INSERT INTO tenants (id) VALUES ($1) ON CONFLICT DO NOTHING`, id); err != nil {
		e.t.Fatalf("create tenant: %v", err)
	}
}

// webhookSub creates an active webhook subscription of tenant to url and
// returns its id and signing secret; configure may adjust the request.
func (e *env) webhookSub(tenant, url string, configure ...func(*hubapi.SubscriptionCreate)) (uuid.UUID, string) {
	e.t.Helper()
	e.tenant(tenant)
	in := hubapi.SubscriptionCreate{
		Name: "test",
		Sink: json.RawMessage(`{"type":"webhook","url":` + quote(url) + `}`),
		// The events insertJobs stores, and not the operational events
		// about the fixture's own subscriptions, which would add jobs the
		// tests do not count.
		EventTypes: []string{"transaction.*"},
	}
	for _, f := range configure {
		f(&in)
	}
	view, secret, err := e.subs.Create(context.Background(), tenant, in)
	if err != nil {
		e.t.Fatalf("create subscription: %v", err)
	}
	if view.VerificationState != "active" {
		e.t.Fatalf("subscription verification = %s (%v), want active", view.VerificationState, view.VerificationError)
	}
	return uuid.MustParse(view.ID), secret
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func retrySchedule(steps ...string) func(*hubapi.SubscriptionCreate) {
	return func(in *hubapi.SubscriptionCreate) { in.RetrySchedule = steps }
}

// insertJobs stores n events of tenant with one job each for the
// subscription, due now, in one statement.
func (e *env) insertJobs(tenant string, sub uuid.UUID, n int) {
	e.t.Helper()
	e.insertJobsDue(tenant, sub, n, 0)
}

// jobIDNow is a UUIDv7 of now, as ingest makes job ids, so inserted jobs
// live in today's partition like ingested ones.
const jobIDNow = `(lpad(to_hex(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
    || substr(replace(gen_random_uuid()::text, '-', ''), 13))::uuid`

// insertJobsDue is insertJobs with the jobs due after a delay.
func (e *env) insertJobsDue(tenant string, sub uuid.UUID, n int, delay time.Duration) {
	e.t.Helper()
	_, err := e.store.Pool.Exec(context.Background(), `
WITH ev AS (
    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
    SELECT $1, gen_random_uuid(), 'transaction.posted', '1.0.0', 1, 'midaz', 'studio.lerian.transaction.posted',
           now(), '{}', '{}', convert_to('{"n":' || g || '}', 'UTF8'), 'topic', 0, g
    FROM generate_series(1, $3) g
    RETURNING seq)
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, next_attempt_at)
SELECT `+jobIDNow+`, $1, $2, seq, now() + $4 * interval '1 millisecond' FROM ev ORDER BY seq`, tenant, sub, n, delay.Milliseconds())
	if err != nil {
		e.t.Fatalf("insert jobs: %v", err)
	}
	if _, err := e.store.Pool.Exec(context.Background(), `SELECT pg_notify($1, '')`, pg.JobsChannel); err != nil {
		e.t.Fatalf("notify: %v", err)
	}
}

func (e *env) count(sql string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.store.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func (e *env) jobStates(sub uuid.UUID) map[string]int {
	e.t.Helper()
	rows, err := e.store.Pool.Query(context.Background(),
		`SELECT state || coalesce('/' || dead_reason, ''), count(*)::int FROM delivery_jobs WHERE subscription_id = $1 GROUP BY 1`, sub)
	if err != nil {
		e.t.Fatal(err)
	}
	states := map[string]int{}
	var state string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&state, &n}, func() error { states[state] = n; return nil }); err != nil {
		e.t.Fatal(err)
	}
	return states
}

// testOptions are fast settings for tests; configure adjusts them.
func (e *env) options(subs *service.Subscriptions, configure ...func(*Options)) Options {
	opts := Options{
		Queue:        e.store.Queue,
		Catalog:      e.store.Catalog,
		Lifecycle:    e.store.Lifecycle,
		OnCall:       e.store.OnCall,
		OpenSink:     subs.Sinks().Open,
		Dispatch:     config.DispatchConfig{Workers: 8, ClaimBatch: 16, IdleInterval: 20 * time.Millisecond, PoisonThreshold: 5},
		Breaker:      config.BreakerConfig{Failures: 1000, Cooldown: time.Second},
		AutoDisable:  config.AutoDisableConfig{Enabled: true, FailureWindow: 120 * time.Hour, FailureSpread: 12 * time.Hour},
		Logger:       testLogger(),
		Registerer:   prometheus.NewRegistry(),
		DrainTimeout: 5 * time.Second,
	}
	for _, f := range configure {
		f(&opts)
	}
	return opts
}

// start runs a dispatcher and its delivery maintenance services, on the
// dispatcher's registry, until the test ends; the returned function stops
// them earlier and waits for both to return.
func (e *env) start(configure ...func(*Options)) (*Dispatcher, func()) {
	e.t.Helper()
	return e.startWith(e.subs, configure...)
}

func (e *env) startWith(subs *service.Subscriptions, configure ...func(*Options)) (*Dispatcher, func()) {
	e.t.Helper()
	opts := e.options(subs, configure...)
	d, err := New(opts)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	services, err := maintenance.Delivery(maintenance.Options{Queue: e.store.Queue, Lifecycle: e.store.Lifecycle, OnCall: e.store.OnCall, Logger: opts.Logger, Registerer: opts.Registerer,
		Dispatcher: d, ReapInterval: e.reap, PoisonThreshold: opts.Dispatch.PoisonThreshold, TenantLimit: e.tenantLimit})
	if err != nil {
		e.t.Fatalf("maintenance services: %v", err)
	}
	upkeep, err := maintenance.NewRunner(maintenance.RunnerOptions{Lifecycle: e.store.Lifecycle, Logger: opts.Logger, Registerer: opts.Registerer}, services)
	if err != nil {
		e.t.Fatalf("maintenance runner: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- d.Run(ctx) }()
	go func() { done <- upkeep.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			for range 2 {
				if err := <-done; err != nil {
					e.t.Errorf("Run: %v", err)
				}
			}
		})
	}
	e.t.Cleanup(stop)
	return d, stop
}

func testLogger() *slog.Logger {
	if os.Getenv("DISPATCH_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// newReceiver is a webhook endpoint on loopback. It answers verification
// probes with 204, unrecorded, and deliveries with what respond says (200
// when respond is nil), n counting deliveries from 1.
func newReceiver(t testing.TB, respond func(r *http.Request, n int) int) *httprecord.Server {
	return httprecord.Start(t, httprecord.Options{
		Unrecorded: func(r *http.Request) bool {
			return r.Header.Get(whsign.HeaderEventType) == whsign.VerificationEventType
		},
		Respond: func(w http.ResponseWriter, r *http.Request, n int) {
			status := http.StatusOK
			if respond != nil {
				status = respond(r, n)
			}
			w.WriteHeader(status)
			_, _ = io.WriteString(w, http.StatusText(status))
		},
	})
}

// waitFor waits up to waitTimeout for cond.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	wait.Poll{Patience: waitTimeout}.Until(t, what, cond)
}

// startIngest runs an ingest consumer of the test topics until the test
// ends, handing first attempts to handoff when it is not nil.
func startIngest(t testing.TB, st *storetest.Store, brokers []string, handoff queue.Handoff) {
	t.Helper()
	consumer, err := ingest.New(ingest.Options{
		Kafka: config.KafkaConfig{
			Brokers: brokers, Group: "streaming-hub",
			Topics: regexp.MustCompile(`^lerian\.streaming\..+`), MetadataRefresh: time.Second,
		},
		Ingest:  config.IngestConfig{TypePrefix: "studio.lerian.", MaxEventBytes: 1 << 20, RosterRefresh: 100 * time.Millisecond},
		Queue:   st.Queue,
		Catalog: st.Catalog,
		Handoff: handoff,
	})
	if err != nil {
		t.Fatalf("ingest: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- consumer.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}
