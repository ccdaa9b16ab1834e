package bench_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/benchmark"
	"github.com/hubctl/hubctl/internal/cli/bench"
	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil/cmdtest"
	"github.com/hubctl/hubctl/internal/cli/profile"
	"github.com/hubctl/hubctl/internal/freeport"
	"github.com/hubctl/hubctl/internal/testutil/kafkatest"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
	"github.com/hubctl/hubctl/internal/testutil/pubsubtest"
	"github.com/hubctl/hubctl/internal/testutil/wait"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	testKEK    = "MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=" // 32 bytes, base64
	adminToken = "bench-test-admin-token-0123456789abcdef"
	tenant     = "bench-tenant"
	// topic is where the bench's events go: the platform's topic of
	// bench.delivered from midaz.
	topic = "lerian.streaming.midaz_bench.delivered"
)

// startHub runs `hubctl serve` on a fresh database and kfake, as a user
// would, and returns its URL and brokers once it is ready.
func startHub(t *testing.T) (server, brokers string, env map[string]string) {
	t.Helper()
	kafka := kafkatest.New(t, topic)
	ports, err := freeport.Pick(1)
	if err != nil {
		t.Fatal(err)
	}
	brokers = strings.Join(kafka.Brokers(), ",")
	env = map[string]string{
		"STREAMING_HUB_POSTGRES_DSN":        pgtest.DSN(t),
		"STREAMING_HUB_KAFKA_BROKERS":       brokers,
		"STREAMING_HUB_KEK_REF":             "HUB_KEK",
		"HUB_KEK":                           testKEK,
		"STREAMING_HUB_ADMIN_TOKEN":         adminToken,
		"STREAMING_HUB_ALLOW_PRIVATE_SINKS": "true",
		"STREAMING_HUB_SHUTDOWN_TIMEOUT":    "5s",
	}
	hub := clitest.Start(t, env, "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", ports[0]))
	server = fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	wait.Poll{Patience: 30 * time.Second, Interval: 100 * time.Millisecond,
		Abort: hub.ExitReport, Explain: hub.Stderr,
	}.Until(t, "serve ready", func() bool {
		resp, err := http.Get(server + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return server, brokers, env
}

// TestBenchEndToEnd runs hubctl bench -n 200 through a real hub: Kafka
// (kfake) → ingest → dispatch → the bench's verifying receiver.
func TestBenchEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole hub")
	}
	server, brokers, hubEnv := startHub(t)
	admin := clitest.Remote(server, adminToken)
	if r := clitest.Run(t, admin, "tenants", "create", tenant); r.Code != 0 {
		t.Fatalf("tenants create exited %d: %s", r.Code, r.Stderr)
	}

	env := clitest.With(admin, map[string]string{"STREAMING_HUB_KAFKA_BROKERS": brokers, "HUBCTL_TENANT": tenant})
	got := runJSON(t, env, "bench", "-n", "200", "--bare-n", "200", "--size", "512", "--timeout", "60s", "-o", "json")
	if got.Events != 200 || got.Delivered != 200 || got.TimedOut || got.Rejected != 0 || got.SizeBytes != 512 {
		t.Errorf("events %d, delivered %d, timed out %v, rejected %d, size %d; want 200 of 512 bytes delivered, none rejected",
			got.Events, got.Delivered, got.TimedOut, got.Rejected, got.SizeBytes)
	}
	l := got.Latency
	if l == nil || !(0 < l.P50 && l.P50 <= l.P95 && l.P95 <= l.P99 && l.P99 <= l.Max) {
		t.Errorf("latency %+v: want 0 < p50 <= p95 <= p99 <= max", l)
	}
	// Each event is acknowledged after it is produced, so timed from the
	// acknowledgement every percentile is at most the produce-timed one.
	if a := got.LatencyFromAck; a == nil || l == nil || a.P50 > l.P50 || a.P95 > l.P95 || a.P99 > l.P99 || a.Max > l.Max ||
		!(a.P50 <= a.P95 && a.P95 <= a.P99 && a.P99 <= a.Max) {
		t.Errorf("latency from ack %+v (from produce %+v): want ordered percentiles, each at most the produce-timed one", a, l)
	}
	if got.DeliveriesPerSecond <= 0 || got.Bare.Requests != 200 || got.Bare.Workers != 8 || got.Bare.RequestsPerSecond <= 0 || got.Ratio <= 0 {
		t.Errorf("rate %v, bare %+v, ratio %v: want positive rates and ratio, 200 bare requests from 8 workers",
			got.DeliveriesPerSecond, got.Bare, got.Ratio)
	}
	// No --hub-pid and a remote database: the CPU figures are unknown.
	if got.CPU.HubMicros != nil || got.CPU.PostgresMicros != nil || got.Memory.HubPeakRSSMiB != nil {
		t.Errorf("cpu %+v, memory %+v: want unavailable without --hub-pid or a local database", got.CPU, got.Memory)
	}

	// Without --keep the subscription is gone.
	if n := benchSubscriptions(t, env); n != 0 {
		t.Errorf("%d bench subscriptions after the run, want none", n)
	}

	// A kept subscription is reused by name: the next run points it at its
	// own receiver and secret, and leaves it there.
	if r := clitest.Run(t, env, "bench", "-n", "20", "--bare-n", "20", "--keep", "-o", "json"); r.Code != 0 {
		t.Fatalf("bench --keep exited %d:\n%s", r.Code, r.Stderr)
	}
	again := runJSON(t, env, "bench", "-n", "50", "--bare-n", "20", "-o", "json")
	if again.Delivered != 50 || again.Rejected != 0 {
		t.Errorf("reusing run delivered %d, rejected %d; want 50 and none", again.Delivered, again.Rejected)
	}
	if n := benchSubscriptions(t, env); n != 1 {
		t.Errorf("%d bench subscriptions after reusing the kept one, want it alone", n)
	}

	// Through a context like the one hubctl dev stores (server, tenant key,
	// tenant, brokers) and nothing else: no flag or variable names the
	// brokers, so the events can only have reached Kafka through it.
	devEnv := clitest.Profile(t, profile.Context{Name: "dev-test", Server: server, Token: tenantKey(t, admin),
		Tenant: tenant, Brokers: strings.Split(brokers, ",")})
	if viaContext := runJSON(t, devEnv, "bench", "-n", "20", "--bare-n", "20", "--name", "bench-context", "-o", "json"); viaContext.Delivered != 20 {
		t.Errorf("run through the context delivered %d, want 20", viaContext.Delivered)
	}

	// --url: the user's receiver, unverified; delivery is read from the
	// hub's records.
	var received atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	ext := runJSON(t, env, "bench", "-n", "100", "--bare-n", "30", "--url", receiver.URL, "--name", "bench-url", "-o", "json")
	if ext.Delivered != 100 || ext.Latency == nil || ext.Latency.P50 > ext.Latency.Max || ext.LatencyFromAck == nil || ext.Ratio <= 0 {
		t.Errorf("--url run: delivered %d, latency %+v, ratio %v; want 100 delivered with latency and a ratio", ext.Delivered, ext.Latency, ext.Ratio)
	}
	// Probe, bare loop, warm-up event and the 100.
	if got := received.Load(); got < 1+30+1+100 {
		t.Errorf("the receiver got %d requests, want at least %d", got, 1+30+1+100)
	}

	// Directly on the database, as an operator on the hub's machine: the
	// database is local, so PostgreSQL's CPU is read, and --hub-pid (this
	// process, which runs the hub here) gives the hub's.
	direct := clitest.With(hubEnv, map[string]string{"HUBCTL_TENANT": tenant})
	local := runJSON(t, direct, "bench", "-n", "50", "--bare-n", "20", "--name", "bench-direct", "--hub-pid", fmt.Sprint(os.Getpid()), "-o", "json")
	if local.Delivered != 50 || local.CPU.HubMicros == nil || local.CPU.PostgresMicros == nil {
		t.Errorf("direct run: delivered %d, cpu %+v; want 50 and both CPU figures", local.Delivered, local.CPU)
	}
	if peak := local.Memory.HubPeakRSSMiB; peak == nil || *peak < 1 {
		t.Errorf("direct run: hub peak RSS %v, want this process's VmHWM", peak)
	}
}

// tenantKey issues an API key of the bench's tenant.
func tenantKey(t *testing.T, admin map[string]string) string {
	t.Helper()
	r := clitest.Run(t, admin, "tenants", "keys", "create", tenant, "--name", "bench-context", "-o", "json")
	var key struct{ Key string }
	if err := json.Unmarshal([]byte(r.Stdout), &key); r.Code != 0 || err != nil || key.Key == "" {
		t.Fatalf("create a tenant key: exit %d: %s", r.Code, r.Stderr)
	}
	return key.Key
}

// runJSON runs hubctl bench and decodes its result.
func runJSON(t *testing.T, env map[string]string, args ...string) benchmark.Result {
	t.Helper()
	r := clitest.Run(t, env, args...)
	if r.Code != 0 {
		t.Fatalf("%v exited %d:\n%s\n%s", args, r.Code, r.Stdout, r.Stderr)
	}
	var got benchmark.Result
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil {
		t.Fatalf("output is not the result: %v\n%s", err, r.Stdout)
	}
	return got
}

// benchSubscriptions counts the tenant's subscriptions named hubctl-bench.
func benchSubscriptions(t *testing.T, env map[string]string) int {
	t.Helper()
	r := clitest.Run(t, env, "subs", "list", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("subs list exited %d: %s", r.Code, r.Stderr)
	}
	var page struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &page); err != nil {
		t.Fatalf("subs list: %v\n%s", err, r.Stdout)
	}
	n := 0
	for _, s := range page.Items {
		if s.Name == "hubctl-bench" {
			n++
		}
	}
	return n
}

// TestBenchRefusesBadFlags checks the usage errors, before any hub is reached.
func TestBenchRefusesBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-n", "0"}, "invalid -n 0"},
		{[]string{"--rate", "-1"}, "invalid --rate"},
		{[]string{"--size", "10"}, "invalid --size 10"},
		{[]string{"--linger", "-1ms"}, "invalid --linger -1ms"},
		{[]string{"--linger", "2m"}, "invalid --linger 2m0s"},
		{[]string{"--bare-workers", "0"}, "invalid --bare-workers"},
		{[]string{"--url", "ftp://x"}, "invalid --url"},
		{[]string{"--addr", "nope"}, "invalid --addr"},
		{[]string{"--timeout", "0s"}, "invalid --timeout"},
		{[]string{"--sink", "kafka"}, "--sink kafka needs --sink-config"},
		{[]string{"--sink", "pull"}, "invalid --sink pull"},
		{[]string{"--sink-config", "x.json"}, "--sink-config is for --sink other than webhook"},
		{[]string{"--sink", "nats", "--url", "http://x", "--sink-config", "x.json"}, "--url is the webhook sink's receiver"},
		{[]string{"--sink", "nats", "--sink-config", "/nonexistent/sink.json"}, "read --sink-config"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := clitest.Run(t, nil, append([]string{"bench"}, tt.args...)...)
			if r.Code != 2 || !strings.Contains(r.Stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", r.Code, r.Stderr, tt.want)
			}
		})
	}
}

func TestSinkObject(t *testing.T) {
	for _, tc := range []struct {
		config, want, err string
	}{
		{`{"url":"nats://127.0.0.1:4222","subject":"bench"}`, `{"subject":"bench","type":"nats","url":"nats://127.0.0.1:4222"}`, ""},
		{`{"type":"nats","subject":"bench"}`, `{"subject":"bench","type":"nats"}`, ""},
		{`{"type":"kafka","topic":"bench"}`, "", `its type is not "nats"`},
		{`["nats"]`, "", "want a JSON object"},
	} {
		got, err := bench.SinkObject("nats", []byte(tc.config))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("SinkObject(%s) = %s, %v; want an error with %q", tc.config, got, err, tc.err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("SinkObject(%s) = %s, %v; want %s", tc.config, got, err, tc.want)
		}
	}
}

func TestSinkFlagsReadTheSinkObject(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kafka.json")
	if err := os.WriteFile(path, []byte(`{"brokers":["127.0.0.1:9092"],"topic":"bench-out"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _, _, _ := cmdtest.Factory(nil)
	var got *bench.Options
	if err := cmdtest.Exec(t, f, bench.NewCmd(f, func(o *bench.Options) error { got = o; return nil }), "--sink", "kafka", "--sink-config", path); err != nil {
		t.Fatal(err)
	}
	if got == nil || !strings.Contains(string(got.SinkObject), `"type":"kafka"`) {
		t.Fatalf("options = %+v, want the kafka sink object read and delivery read from records", got)
	}
}

// TestBenchPubSubSink runs hubctl bench --sink pubsub through a real hub
// to the Pub/Sub client library's fake, as to an emulator: delivery is read
// from the hub's records, and every event reaches the topic.
func TestBenchPubSubSink(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole hub")
	}
	server, brokers, _ := startHub(t)
	admin := clitest.Remote(server, adminToken)
	if r := clitest.Run(t, admin, "tenants", "create", tenant); r.Code != 0 {
		t.Fatalf("tenants create exited %d: %s", r.Code, r.Stderr)
	}
	fake := pubsubtest.Start(t)
	topic := fake.NewTopic(t)
	config, _ := json.Marshal(map[string]string{"project": pubsubtest.Project, "topic": topic, "endpoint": fake.Endpoint()})
	path := filepath.Join(t.TempDir(), "pubsub.json")
	if err := os.WriteFile(path, config, 0o600); err != nil {
		t.Fatal(err)
	}

	env := clitest.With(admin, map[string]string{"STREAMING_HUB_KAFKA_BROKERS": brokers, "HUBCTL_TENANT": tenant})
	got := runJSON(t, env, "bench", "-n", "100", "--bare-n", "20", "--sink", "pubsub", "--sink-config", path, "--timeout", "60s", "-o", "json")
	if got.Events != 100 || got.Delivered != 100 || got.TimedOut || got.Latency == nil {
		t.Errorf("events %d, delivered %d, timed out %v, latency %+v; want 100 delivered with latency figures", got.Events, got.Delivered, got.TimedOut, got.Latency)
	}
	t.Logf("pubsub bench: %.0f deliveries/s, latency %+v", got.DeliveriesPerSecond, got.Latency)
	// The warm-up event and the 100.
	if n := len(fake.Messages(topic)); n < 101 {
		t.Errorf("topic holds %d messages, want at least 101", n)
	}
}
