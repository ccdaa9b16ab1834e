//go:build linux

package chaos

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hubctl/hubctl/internal/childproc"
	"github.com/hubctl/hubctl/internal/devenv"
	"github.com/hubctl/hubctl/internal/freeport"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/testutil/wait"
	"github.com/hubctl/hubctl/pkg/client"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

const (
	// restartBound is the recovery the hub promises: ingesting and ready
	// within 10s of a restart after SIGKILL (docs/reliability.md).
	restartBound = 10 * time.Second
	// loadAllowance is what the short version, run beside the whole suite,
	// adds to restartBound where a scenario rules out the slow path by
	// other means (TestRestartWithinTheBound's long session).
	loadAllowance = 10 * time.Second
	// patience bounds every wait for something that must happen.
	patience = 90 * time.Second
	// attemptTimeout is the webhook subscription's: short, so a hanging
	// receiver costs seconds. A job's lease is this plus dispatch's
	// margins (25s), which is how long a job killed mid-attempt waits.
	attemptTimeout = "1s"
	reapInterval   = 5 * time.Second
)

// world is one scenario's hub: its own database, Kafka cluster, hub
// process, webhook receiver, producer and pull follower.
type world struct {
	t        *testing.T
	dir      string
	dsn      string
	pool     *pgxpool.Pool
	kafka    *devenv.Kafka
	kafkaOpt devenv.KafkaOptions
	addr     string
	env      []string
	hub      *exec.Cmd
	hubExit  chan error
	hubLog   *os.File

	tenant   *client.Client
	sub      string // the webhook subscription
	pullSub  string
	receiver *receiver
	producer *producer
	puller   *puller
	// acked and ackedInvalid are what the producer had acknowledged when
	// the load stopped, and subjectOf the subject of each acked event.
	acked        []string
	ackedInvalid int
	subjectOf    map[string]string
	// ordered is the subscription ordered by subject, when the scenario
	// asked for subjects.
	ordered *orderedSubscription
}

type worldOptions struct {
	// instanceID makes the hub a static group member; empty leaves it
	// dynamic.
	instanceID string
	// pg is the cluster to use; nil means the shared one.
	pg *devenv.Postgres
	// subjects, when set, are given to the produced events in turn, and
	// the tenant gets a subscription ordered by subject whose receiver
	// fails at random (world.ordered).
	subjects []string
	// operationalTopic, when set, is created and is the hub's
	// STREAMING_HUB_OPERATIONAL_TOPIC.
	operationalTopic string
	// sessionTimeout, when set, is the hub's
	// STREAMING_HUB_KAFKA_SESSION_TIMEOUT.
	sessionTimeout time.Duration
}

func newWorld(t *testing.T, opts worldOptions) *world {
	t.Helper()
	bin := hubctl(t)
	pg := opts.pg
	if pg == nil {
		pg = sharedPostgres(t)
	}
	w := &world{t: t, dir: t.TempDir()}
	w.dsn = createDatabase(t, pg)
	pool, err := pgxpool.New(context.Background(), w.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	w.pool = pool

	ports, err := freeport.Pick(2)
	if err != nil {
		t.Fatal(err)
	}
	w.kafkaOpt = devenv.KafkaOptions{Port: ports[0], DataDir: filepath.Join(w.dir, "kafka"), Topics: []string{topic}}
	if opts.operationalTopic != "" {
		w.kafkaOpt.Topics = append(w.kafkaOpt.Topics, opts.operationalTopic)
	}
	if w.kafka, err = devenv.StartKafka(w.kafkaOpt); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.kafka.Close() })
	w.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))

	adminToken, kek := randomHex(20), make([]byte, 32)
	_, _ = rand.Read(kek)
	w.env = append(cleanEnviron(),
		"CHAOS_KEK="+base64.StdEncoding.EncodeToString(kek),
		"STREAMING_HUB_KEK_REF=CHAOS_KEK",
		"STREAMING_HUB_ADMIN_TOKEN="+adminToken,
		"STREAMING_HUB_POSTGRES_DSN="+w.dsn,
		"STREAMING_HUB_KAFKA_BROKERS="+strings.Join(w.kafka.Brokers(), ","),
		"STREAMING_HUB_KAFKA_METADATA_REFRESH=1s",
		"STREAMING_HUB_KAFKA_INSTANCE_ID="+opts.instanceID,
		"STREAMING_HUB_HTTP_LISTEN_ADDR="+w.addr,
		"STREAMING_HUB_ALLOW_PRIVATE_SINKS=true",
		"STREAMING_HUB_DISPATCH_IDLE_INTERVAL=50ms",
		"STREAMING_HUB_BREAKER_COOLDOWN=1s",
		"STREAMING_HUB_ROSTER_REFRESH=200ms",
		"STREAMING_HUB_SHUTDOWN_TIMEOUT=5s",
		// The scenarios run side by side, most on one PostgreSQL with its
		// default 100 connections; at the default pool (25) a few hubs
		// and the tests' own readers ran it out ("too many clients").
		"STREAMING_HUB_POSTGRES_MAX_OPEN_CONNS=8",
		"STREAMING_HUB_OPERATIONAL_TOPIC="+opts.operationalTopic,
	)
	if opts.sessionTimeout > 0 {
		w.env = append(w.env, "STREAMING_HUB_KAFKA_SESSION_TIMEOUT="+opts.sessionTimeout.String())
	}
	if w.hubLog, err = os.Create(filepath.Join(w.dir, "hub.log")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.stopLoad()
		if w.puller != nil {
			w.puller.stop()
		}
		w.kill()
		if t.Failed() {
			out, _ := os.ReadFile(w.hubLog.Name())
			// Request lines can fill the tail of the log; the hub's own
			// warnings are what explain a stall.
			t.Logf("hub warnings and errors (last 40):\n%s", lastLines(warnings(string(out)), 40))
			t.Logf("hub log (last 60 lines):\n%s", lastLines(string(out), 60))
			// Failed attempts are not logged: their errors say why nothing
			// was delivered.
			t.Logf("delivery state:\n%s", w.deliveryState())
		}
		_ = w.hubLog.Close()
	})
	w.start(bin)
	if _, err := w.waitReady(time.Now()); err != nil {
		t.Fatal(err)
	}

	admin, err := client.New("http://"+w.addr, client.WithToken(adminToken))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := admin.CreateTenant(ctx, tenant); err != nil {
		t.Fatal(err)
	}
	key, err := admin.CreateAPIKey(ctx, tenant, "chaos")
	if err != nil {
		t.Fatal(err)
	}
	if w.tenant, err = client.New("http://"+w.addr, client.WithToken(key.Key)); err != nil {
		t.Fatal(err)
	}
	secret := "whsec_chaos_" + randomHex(16)
	w.receiver = startReceiver(secret)
	t.Cleanup(w.receiver.srv.Close)
	// Retries a second apart for long enough to outlast any scenario, so a
	// job goes dead only if something is really wrong.
	schedule := []string{"0s", "1s", "1s", "1s", "2s", "2s", "2s", "5s", "5s", "5s", "10s", "10s"}
	created, err := w.tenant.CreateSubscription(ctx, "", hubapi.SubscriptionCreate{
		Name: "chaos webhook", Sink: json.RawMessage(`{"type":"webhook","url":"` + w.receiver.srv.URL + `"}`),
		EventTypes: []string{"transaction.*"}, RetrySchedule: schedule, AttemptTimeout: attemptTimeout, SigningSecret: secret,
	})
	if err != nil {
		t.Fatal(err)
	}
	w.sub = w.verified(created.Subscription)
	pull, err := w.tenant.CreateSubscription(ctx, "", hubapi.SubscriptionCreate{
		Name: "chaos pull", Sink: json.RawMessage(`{"type":"pull"}`), EventTypes: []string{"transaction.*"},
	})
	if err != nil {
		t.Fatal(err)
	}
	w.pullSub = pull.ID
	// The roster is reloaded every 200ms: the tenant is known before the
	// first event.
	time.Sleep(500 * time.Millisecond)

	if len(opts.subjects) > 0 {
		w.ordered = w.addOrderedSubscription()
		// The roster is reloaded every 200ms.
		time.Sleep(500 * time.Millisecond)
	}

	if w.producer, err = startProducer(w.kafka.Brokers(), opts.subjects); err != nil {
		t.Fatal(err)
	}
	w.puller = startPuller(w.tenant, w.pullSub)
	return w
}

// verified returns the id of a webhook subscription just created, once
// it is active. Creating one probes its destination at once, within the
// attempt timeout, which a machine running every package's tests under the
// race detector can overrun; the subscription is then created failed, no
// event would ever match it, and the scenario would fail long after with
// nothing delivered. The probe is repeated, as an operator would repeat it,
// until it passes.
func (w *world) verified(created hubapi.Subscription) string {
	w.t.Helper()
	state, problem := created.VerificationState, created.VerificationError
	wait.Poll{Patience: patience, Interval: 200 * time.Millisecond,
		Explain: func() string { return "last probe: " + problem }}.Until(w.t, "subscription "+created.ID+" verified", func() bool {
		if state == "active" {
			return true
		}
		sub, err := w.tenant.VerifySubscription(w.t.Context(), "", created.ID)
		if err != nil {
			problem = err.Error()
			return false
		}
		state, problem = sub.VerificationState, sub.VerificationError
		return state == "active"
	})
	return created.ID
}

func createDatabase(t *testing.T, cluster *devenv.Postgres) string {
	t.Helper()
	name := "chaos_" + randomHex(6)
	conn, err := pgx.Connect(t.Context(), cluster.DSNFor("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	dsn := strings.Replace(cluster.DSNFor("postgres"), "/postgres?", "/"+name+"?", 1)
	if err := pg.MigrateUp(t.Context(), dsn); err != nil {
		t.Fatal(err)
	}
	return dsn
}

// cleanEnviron is this process's environment without any hub setting, so
// the developer's own configuration never leaks into the hub under test.
func cleanEnviron() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "STREAMING_HUB_") || strings.HasPrefix(kv, "HUBCTL_")
	})
}

// start launches `hubctl serve`. It dies with the test binary.
func (w *world) start(bin string) {
	w.t.Helper()
	fmt.Fprintf(w.hubLog, "----- start %s\n", time.Now().Format(time.RFC3339Nano))
	w.hub, w.hubExit = w.spawn(bin, w.env, w.hubLog)
}

// spawn starts `hubctl serve` with env, its output to log.
func (w *world) spawn(bin string, env []string, log *os.File) (*exec.Cmd, chan error) {
	w.t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = log, log
	// The parent-death signal ties the hub to this test process, and
	// childproc keeps it from firing early: Linux sends it when the forking
	// thread ends, which a Go thread can do long before the process does.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	proc, err := childproc.Start(cmd)
	if err != nil {
		w.t.Fatal(err)
	}
	exit := make(chan error, 1)
	go func() {
		<-proc.Done()
		exit <- proc.Err()
	}()
	return cmd, exit
}

// kill ends the hub with SIGKILL and waits until it is gone.
func (w *world) kill() {
	if w.hub == nil {
		return
	}
	_ = w.hub.Process.Signal(syscall.SIGKILL)
	<-w.hubExit
	fmt.Fprintf(w.hubLog, "----- SIGKILL %s\n", time.Now().Format(time.RFC3339Nano))
	w.hub = nil
}

// restart starts the hub again and returns when it started.
func (w *world) restart() time.Time {
	at := time.Now()
	w.start(hubctl(w.t))
	return at
}

func (w *world) ready() bool { return readyAt(w.addr) }

func readyAt(addr string) bool {
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// waitReady polls /readyz until it answers 200 and returns how long after
// since that was.
func (w *world) waitReady(since time.Time) (time.Duration, error) {
	deadline := time.Now().Add(patience)
	for !w.ready() {
		select {
		case err := <-w.hubExit:
			w.hubExit <- err
			return 0, fmt.Errorf("the hub exited before it was ready: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the hub was not ready within %v", patience)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(since), nil
}

// recovery is how long after a fault the hub was ready, stored a new event
// and delivered one.
type recovery struct {
	ready, ingested, delivered time.Duration
}

// watchRecovery waits until the hub is ready, has stored an event received
// after since, and a delivery has arrived after since.
func (w *world) watchRecovery(since time.Time) recovery {
	w.t.Helper()
	var r recovery
	deadline := time.Now().Add(patience)
	for r.ready == 0 || r.ingested == 0 || r.delivered == 0 {
		if time.Now().After(deadline) {
			w.t.Fatalf("no full recovery within %v of %s: %+v", patience, since.Format(time.RFC3339Nano), r)
		}
		if r.ready == 0 && w.ready() {
			r.ready = time.Since(since)
		}
		if r.ingested == 0 {
			var first *time.Time
			if err := w.pool.QueryRow(context.Background(), `SELECT min(received_at) FROM events WHERE received_at > $1 AND source <> 'hubctl'`, since).Scan(&first); err == nil && first != nil {
				r.ingested = first.Sub(since)
			}
		}
		if r.delivered == 0 {
			if at, ok := w.receiver.firstAfter(since); ok {
				r.delivered = at.Sub(since)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return r
}

func (w *world) stopLoad() {
	if w.producer != nil {
		w.producer.stop()
		w.acked, w.ackedInvalid = w.producer.produced()
		w.subjectOf = w.producer.subjectsOf()
		w.producer = nil
	}
}

// deliveryState is the jobs by state and the most frequent errors of
// failed attempts, for a failed scenario's log.
func (w *world) deliveryState() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b strings.Builder
	for _, q := range []struct{ title, sql string }{
		{"jobs by state", `SELECT state, count(*) FROM delivery_jobs GROUP BY 1 ORDER BY 2 DESC`},
		{"failed attempts by error", `SELECT left(coalesce(error, ''), 160), count(*) FROM delivery_attempts WHERE outcome = 'failed' GROUP BY 1 ORDER BY 2 DESC LIMIT 10`},
	} {
		fmt.Fprintf(&b, "  %s:\n", q.title)
		rows, err := w.pool.Query(ctx, q.sql)
		if err != nil {
			fmt.Fprintf(&b, "    (%v)\n", err)
			continue
		}
		var what string
		var n int
		_, err = pgx.ForEachRow(rows, []any{&what, &n}, func() error {
			fmt.Fprintf(&b, "    %6d  %s\n", n, what)
			return nil
		})
		if err != nil {
			fmt.Fprintf(&b, "    (%v)\n", err)
		}
	}
	return b.String()
}

func (w *world) count(sql string, args ...any) int {
	w.t.Helper()
	var n int
	if err := w.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		w.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// inIngestTransaction reports whether the hub has an ingest transaction
// open right now: one that holds the ingest batch's advisory lock (taken
// first, released by the commit) and has written.
func (w *world) inIngestTransaction() bool {
	var open bool
	err := w.pool.QueryRow(context.Background(), `
		SELECT EXISTS (SELECT 1 FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid
		 WHERE a.datname = current_database() AND a.application_name LIKE 'hubctl serve%'
		   AND l.locktype = 'advisory' AND l.granted AND a.backend_xid IS NOT NULL)`).Scan(&open)
	return err == nil && open
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// warnings keeps the log's WARN and ERROR lines other than request logs.
func warnings(log string) string {
	var kept []string
	for line := range strings.Lines(log) {
		if (strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`)) &&
			!strings.Contains(line, `"msg":"http request"`) {
			kept = append(kept, strings.TrimRight(line, "\n"))
		}
	}
	return strings.Join(kept, "\n")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
