package hub_test

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/testutil/kafkatest"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

// The cell layout (docs/scaling.md, "Cells"): hubs with databases of their
// own consume the same Kafka topics, each in a consumer group of its own,
// and each admits only the tenants of its roster. Nothing is shared but
// the topics, so a tenant lives in exactly one cell.

// cellKeys are the event keys of these tests, one topic each (three
// partitions apiece).
var cellKeys = []string{"transaction.posted", "account.created"}

// cellReceiver is one cell's webhook destination: it answers every
// delivery 200 and counts deliveries by event id and by tenant.
type cellReceiver struct {
	server *httptest.Server
	mu     sync.Mutex
	events map[string]int
	// tenants holds the tenant each event id came with.
	tenants map[string]string
}

func newCellReceiver(t *testing.T) *cellReceiver {
	r := &cellReceiver{events: map[string]int{}, tenants: map[string]string{}}
	r.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("X-Lerian-Event-Type") != "hub.verification" {
			id := req.Header.Get("X-Lerian-Event-Id")
			r.mu.Lock()
			r.events[id]++
			r.tenants[id] = req.Header.Get("X-Lerian-Tenant-Id")
			r.mu.Unlock()
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(r.server.Close)
	return r
}

// counts is a copy of the deliveries by event id.
func (r *cellReceiver) counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.events))
	for id, n := range r.events {
		out[id] = n
	}
	return out
}

// cell is one hub deployment: its database, its consumer group, its
// receiver and the serve instances running it.
type cell struct {
	t        *testing.T
	name     string
	dsn      string
	kafka    *kafkatest.Cluster
	receiver *cellReceiver
	// instances are the bases (http://host:port) of its running serves,
	// procs the processes behind them, in the same order.
	instances []string
	procs     []*clitest.Process
}

// startCell provisions the cell's tenants on a fresh database and starts
// one serve instance with a subscription per tenant to every cellKey,
// delivered to the cell's receiver.
func startCell(t *testing.T, name string, kafka *kafkatest.Cluster, tenants ...string) *cell {
	t.Helper()
	c := &cell{t: t, name: name, dsn: pgtest.DSN(t), kafka: kafka, receiver: newCellReceiver(t)}
	for _, tenant := range tenants {
		mustRun(t, clitest.Database(c.dsn), "", "tenants", "create", tenant)
	}
	c.addInstance()
	for _, tenant := range tenants {
		c.subscribe(tenant)
	}
	return c
}

// addInstance starts one more serve of the cell: same database, same
// consumer group, so the group rebalances the partitions among them.
func (c *cell) addInstance() {
	c.t.Helper()
	addr := freeAddr(c.t)
	proc := clitest.Start(c.t, map[string]string{
		"STREAMING_HUB_POSTGRES_DSN":           c.dsn,
		"STREAMING_HUB_KAFKA_BROKERS":          strings.Join(c.kafka.Brokers(), ","),
		"STREAMING_HUB_KAFKA_GROUP":            "hub-cell-" + c.name,
		"STREAMING_HUB_KAFKA_METADATA_REFRESH": "1s",
		"STREAMING_HUB_KEK_REF":                "HUB_KEK",
		"HUB_KEK":                              e2eKEK,
		"STREAMING_HUB_ADMIN_TOKEN":            e2eAdminToken,
		"STREAMING_HUB_ALLOW_PRIVATE_SINKS":    "true",
		"STREAMING_HUB_DISPATCH_IDLE_INTERVAL": "50ms",
		"STREAMING_HUB_SHUTDOWN_TIMEOUT":       "10s",
	}, "serve", "--listen", addr)
	c.t.Cleanup(func() {
		if code := proc.Stop(patience); code != 0 {
			c.t.Errorf("cell %s: serve exited %d after SIGTERM:\n%s", c.name, code, proc.Stderr())
		}
	})
	base := "http://" + addr
	waitFor(c.t, "cell "+c.name+"'s serve to be ready", proc, func() bool { return readyz(base) == http.StatusOK })
	c.instances = append(c.instances, base)
	c.procs = append(c.procs, proc)
}

// subscribe creates the tenant's webhook subscription to every cellKey
// through the cell's API, as the operator's admin token.
func (c *cell) subscribe(tenant string) {
	c.t.Helper()
	body := fmt.Sprintf(`{"name": "cell", "sink": {"type": "webhook", "url": %q}, "event_types": [%q, %q]}`,
		c.receiver.server.URL+"/hooks", cellKeys[0], cellKeys[1])
	mustRun(c.t, clitest.Remote(c.instances[0], e2eAdminToken), body, "subs", "create", "--from-file", "-", "--tenant", tenant)
}

// ingested sums, over the cell's instances, the records its ingest stored
// a verdict for (every verdict counts once: a batch counts only when it
// commits, and records an earlier writer stored are skipped).
func (c *cell) ingested(labels map[string]string) float64 {
	c.t.Helper()
	var sum float64
	for _, base := range c.instances {
		sum += metricSum(c.t, base, "streaming_hub_ingest_records_total", labels)
	}
	return sum
}

// storedByTenant counts the events from Kafka in the cell's inbox by
// tenant (the hub's operational events, such as subscription_created, are
// inbox events too, written by the changes themselves).
func (c *cell) storedByTenant(ctx context.Context) map[string]int {
	c.t.Helper()
	return c.countBy(ctx, `SELECT tenant_id, count(*) FROM events WHERE event_key NOT LIKE 'hub.%' GROUP BY tenant_id`)
}

// countBy runs a query of (key, count) rows on the cell's database.
func (c *cell) countBy(ctx context.Context, query string) map[string]int {
	c.t.Helper()
	conn, err := pgx.Connect(ctx, c.dsn)
	if err != nil {
		c.t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, query)
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[string]int{}
	for rows.Next() {
		var key string
		var n int
		if err := rows.Scan(&key, &n); err != nil {
			c.t.Fatal(err)
		}
		out[key] = n
	}
	if err := rows.Err(); err != nil {
		c.t.Fatal(err)
	}
	return out
}

// settled waits until every one of want has reached the receiver and no
// job of the cell is pending or in flight; the receiver counts a delivery
// before it answers and a job settles only after the answer, so the
// counts are then final.
func (c *cell) settled(ctx context.Context, want map[string]bool) {
	c.t.Helper()
	waitFor(c.t, fmt.Sprintf("cell %s to deliver its %d events and settle every job", c.name, len(want)), c.procs[0], func() bool {
		got := c.receiver.counts()
		for id := range want {
			if got[id] == 0 {
				return false
			}
		}
		live := c.countBy(ctx, `SELECT state, count(*) FROM delivery_jobs WHERE state IN ('pending', 'in_flight') GROUP BY state`)
		return len(live) == 0
	})
}

// metricSum sums the samples of one family on a serve's /metrics whose
// labels include every one of labels.
func metricSum(t *testing.T, base, name string, labels map[string]string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		line := lines.Text()
		series, value, ok := strings.Cut(line, " ")
		if !ok || (series != name && !strings.HasPrefix(series, name+"{")) {
			continue
		}
		matches := true
		for k, v := range labels {
			if !strings.Contains(series, k+`="`+v+`"`) {
				matches = false
			}
		}
		if !matches {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("%s = %q: %v", series, value, err)
		}
		sum += v
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	return sum
}

// cellRecord is a well-formed CloudEvent of tenant with the event key of
// its topic, keyed by its id so the default partitioner spreads events
// over the partitions; malformed gives it a UUIDv4 id (quarantined as
// invalid_id before the roster is asked).
func cellRecord(eventKey, tenant string, malformed bool) (*kgo.Record, string) {
	return cellRecordOn(topicOf(eventKey), eventKey, tenant, malformed)
}

// cellRecordOn is cellRecord on topic, whatever the event key: routing
// comes from the headers, never from the topic.
func cellRecordOn(topic, eventKey, tenant string, malformed bool) (*kgo.Record, string) {
	id := uuid.Must(uuid.NewV7()).String()
	if malformed {
		id = uuid.NewString()
	}
	resource, eventType, _ := strings.Cut(eventKey, ".")
	headers := [][2]string{
		{"ce-specversion", "1.0"}, {"ce-id", id}, {"ce-source", "midaz"},
		{"ce-type", "studio.lerian.midaz." + eventKey}, {"ce-time", time.Now().UTC().Format(time.RFC3339Nano)},
		{"ce-schemaversion", e2eSchemaVersion}, {"ce-resourcetype", resource}, {"ce-eventtype", eventType},
		{"ce-tenantid", tenant}, {"content-type", "application/json"},
	}
	rec := &kgo.Record{Topic: topic, Key: []byte(id), Value: []byte(`{"tenant":"` + tenant + `"}`)}
	for _, h := range headers {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h[0], Value: []byte(h[1])})
	}
	return rec, id
}

// streamLog is what a test produced: the ids of well-formed events by
// tenant, and how many records were malformed.
type streamLog struct {
	byTenant  map[string][]string
	malformed int
	total     int
}

// produceRound writes perTenant well-formed events of every tenant, spread
// over both topics, and one malformed record per topic, failing the test
// if the broker does not take them.
func produceRound(t *testing.T, ctx context.Context, kafka *kafkatest.Cluster, log *streamLog, perTenant int, tenants ...string) {
	t.Helper()
	if err := writeRound(ctx, kafka.Client(t), log, perTenant, tenants...); err != nil {
		t.Fatal(err)
	}
}

// writeRound is produceRound for a goroutine other than the test's: it
// returns what went wrong instead of failing the test.
func writeRound(ctx context.Context, producer *kgo.Client, log *streamLog, perTenant int, tenants ...string) error {
	var records []*kgo.Record
	for i := range perTenant {
		for _, tenant := range tenants {
			rec, id := cellRecord(cellKeys[i%len(cellKeys)], tenant, false)
			records = append(records, rec)
			log.byTenant[tenant] = append(log.byTenant[tenant], id)
			log.total++
		}
	}
	for _, key := range cellKeys {
		rec, _ := cellRecord(key, tenants[0], true)
		records = append(records, rec)
		log.malformed++
		log.total++
	}
	if err := producer.ProduceSync(ctx, records...).FirstErr(); err != nil {
		return fmt.Errorf("produce a round of %d records: %w", len(records), err)
	}
	return nil
}

// idsOf is the set of the events of the given tenants.
func (l *streamLog) idsOf(tenants ...string) map[string]bool {
	out := map[string]bool{}
	for _, tenant := range tenants {
		for _, id := range l.byTenant[tenant] {
			out[id] = true
		}
	}
	return out
}

func (l *streamLog) count(tenants ...string) int { return len(l.idsOf(tenants...)) }

// TestTwoCellsSplitTenantsOverTheSameTopics: two hubs with databases of
// their own consume the same topics, each in its own group; each delivers
// exactly its roster's tenants' events, once, and stores nothing of the
// others, while a second instance of one cell joins mid-stream and
// rebalances its group.
func TestTwoCellsSplitTenantsOverTheSameTopics(t *testing.T) {
	ctx := t.Context()
	topics := make([]string, len(cellKeys))
	for i, key := range cellKeys {
		topics[i] = topicOf(key)
	}
	kafka := kafkatest.New(t, topics...)
	aTenants := []string{"a1", "a2", "a3"}
	bTenants := []string{"b1", "b2", "b3"}
	const stranger = "x1" // in neither roster
	a := startCell(t, "a", kafka, aTenants...)
	b := startCell(t, "b", kafka, bTenants...)

	everyone := append(append(append([]string{}, aTenants...), bTenants...), stranger)
	log := &streamLog{byTenant: map[string][]string{}}
	const rounds, perRound = 6, 60
	// The rounds go out from a goroutine of their own while a second
	// instance of cell a joins its group, so the group rebalances with
	// records in flight.
	producer := kafka.Client(t)
	produced := make(chan error, 1)
	go func() {
		for range rounds {
			if err := writeRound(ctx, producer, log, perRound, everyone...); err != nil {
				produced <- err
				return
			}
		}
		produced <- nil
	}()
	waitFor(t, "cell a to store its first records", a.procs[0], func() bool { return a.ingested(nil) > 0 })
	a.addInstance()
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	// Should the rounds have ended before the rebalance gave the second
	// instance partitions, more follow, each once cell a has judged the
	// last, until it has stored some.
	waitFor(t, "the second instance of cell a to store records of partitions it took over", a.procs[1], func() bool {
		if metricSum(t, a.instances[1], "streaming_hub_ingest_records_total", nil) > 0 {
			return true
		}
		if a.ingested(nil) >= float64(log.total) {
			produceRound(t, ctx, kafka, log, 10, everyone...)
		}
		return false
	})

	for _, c := range []*cell{a, b} {
		waitFor(t, fmt.Sprintf("cell %s to store a verdict for all %d records", c.name, log.total), c.procs[0], func() bool {
			return c.ingested(nil) == float64(log.total)
		})
	}
	a.settled(ctx, log.idsOf(aTenants...))
	b.settled(ctx, log.idsOf(bTenants...))

	for _, side := range []struct {
		cell          *cell
		own, others   []string
		otherCellName string
	}{
		{a, aTenants, bTenants, "b"},
		{b, bTenants, aTenants, "a"},
	} {
		c := side.cell
		own := log.idsOf(side.own...)
		got := c.receiver.counts()
		for id := range own {
			if got[id] != 1 {
				t.Errorf("cell %s delivered its tenant's event %s %d times, want once", c.name, id, got[id])
			}
		}
		for id, n := range got {
			if !own[id] {
				t.Errorf("cell %s delivered event %s of tenant %q (%d times): not in its roster", c.name, id, c.receiver.tenants[id], n)
			}
		}
		stored := c.storedByTenant(ctx)
		wantStored := map[string]int{}
		for _, tenant := range side.own {
			wantStored[tenant] = log.count(tenant)
		}
		if !maps.Equal(stored, wantStored) {
			t.Errorf("cell %s's inbox by tenant = %v, want %v: the others' events are discarded, nothing stored", c.name, stored, wantStored)
		}
		unknown := c.ingested(map[string]string{"verdict": "discard", "reason": "unknown_tenant"})
		if want := log.count(append(side.others, stranger)...); unknown != float64(want) {
			t.Errorf("cell %s discarded %v records as unknown_tenant, want %d: cell %s's tenants' and %s's", c.name, unknown, want, side.otherCellName, stranger)
		}
		if q := c.ingested(map[string]string{"verdict": "quarantine"}); q != float64(log.malformed) {
			t.Errorf("cell %s quarantined %v records, want the %d malformed ones", c.name, q, log.malformed)
		}
		attempts := c.countBy(ctx, `SELECT outcome, count(*) FROM all_delivery_attempts GROUP BY outcome`)
		if want := map[string]int{"succeeded": len(own)}; !maps.Equal(attempts, want) {
			t.Errorf("cell %s's attempts by outcome = %v, want %v", c.name, attempts, want)
		}
	}
}

// markerKey is the event key of the probes an operator produces during a
// cut-over: no subscription takes it.
const markerKey = "cutover.marker"

// TestATenantMovesBetweenCellsAtAQuietCutOver runs the cut-over of
// docs/scaling.md, "Moving a tenant between cells", with the CLI: the
// tenant's events before the cut are delivered by the old cell only, those
// after by the new cell only, each once, while the other tenants' traffic
// goes on.
func TestATenantMovesBetweenCellsAtAQuietCutOver(t *testing.T) {
	ctx := t.Context()
	topics := make([]string, len(cellKeys))
	for i, key := range cellKeys {
		topics[i] = topicOf(key)
	}
	kafka := kafkatest.New(t, topics...)
	const mover = "m1"
	a := startCell(t, "a", kafka, "a1", mover)
	b := startCell(t, "b", kafka, "b1")
	before := &streamLog{byTenant: map[string][]string{}}
	after := &streamLog{byTenant: map[string][]string{}}
	produceRound(t, ctx, kafka, before, 100, "a1", "b1", mover)

	// 1. The mover's producers pause; the others go on.
	produced := before.total
	others := &streamLog{byTenant: map[string][]string{}}
	produceRound(t, ctx, kafka, others, 50, "a1", "b1")
	produced += others.total
	// 2. The old cell has stored everything produced before the pause.
	waitFor(t, "cell a to store a verdict for every record produced before the pause", a.procs[0], func() bool {
		return a.ingested(nil) >= float64(produced)
	})
	// 3. The old cell stops admitting the mover.
	mustRun(t, clitest.Database(a.dsn), "", "tenants", "deactivate", mover, "--yes")
	// 4. Probes of the mover until the old cell discards one as inactive:
	// its roster has the change. A probe it still admitted is stored, taken
	// by no subscription; the new cell does not know the mover yet.
	markers := 0
	waitFor(t, "cell a to discard a probe of the deactivated tenant", a.procs[0], func() bool {
		if a.ingested(map[string]string{"reason": "inactive_tenant"}) >= 1 {
			return true
		}
		if a.ingested(nil) >= float64(produced+markers) {
			rec, _ := cellRecordOn(topics[markers%len(topics)], markerKey, mover, false)
			kafka.Produce(t, ctx, rec.Topic, rec)
			markers++
		}
		return false
	})
	produced += markers
	// 5. The new cell has judged every record produced so far: none of the
	// mover's is left for it to read once it knows the mover.
	waitFor(t, "cell b to store a verdict for every record produced before the cut-over", b.procs[0], func() bool {
		return b.ingested(nil) >= float64(produced)
	})
	// 6. The new cell admits the mover, with its subscription in place
	// before the first event.
	mustRun(t, clitest.Database(b.dsn), "", "tenants", "create", mover)
	b.subscribe(mover)
	// 7. The mover's producers resume.
	produceRound(t, ctx, kafka, after, 100, "a1", "b1", mover)
	produced += after.total

	for _, c := range []*cell{a, b} {
		waitFor(t, fmt.Sprintf("cell %s to store a verdict for all %d records", c.name, produced), c.procs[0], func() bool {
			return c.ingested(nil) == float64(produced)
		})
	}
	aWants, bWants := before.idsOf("a1", mover), before.idsOf("b1")
	for id := range others.idsOf("a1") {
		aWants[id] = true
	}
	for id := range others.idsOf("b1") {
		bWants[id] = true
	}
	for id := range after.idsOf("a1") {
		aWants[id] = true
	}
	for id := range after.idsOf("b1", mover) {
		bWants[id] = true
	}
	a.settled(ctx, aWants)
	b.settled(ctx, bWants)
	for _, side := range []struct {
		cell *cell
		want map[string]bool
	}{{a, aWants}, {b, bWants}} {
		got := side.cell.receiver.counts()
		for id := range side.want {
			if got[id] != 1 {
				t.Errorf("cell %s delivered event %s %d times, want once", side.cell.name, id, got[id])
			}
		}
		for id, n := range got {
			if !side.want[id] {
				t.Errorf("cell %s delivered event %s of tenant %q %d times; it belongs to the other cell", side.cell.name, id, side.cell.receiver.tenants[id], n)
			}
		}
	}
	moved := b.storedByTenant(ctx)
	if moved[mover] != after.count(mover) {
		t.Errorf("cell b stored %d events of %s, want the %d produced after the cut-over", moved[mover], mover, after.count(mover))
	}
	kept := a.countBy(ctx, `SELECT event_key, count(*) FROM events WHERE tenant_id = '`+mover+`' AND event_key NOT LIKE 'hub.%' GROUP BY event_key`)
	var keptEvents int
	for key, n := range kept {
		if key != markerKey {
			keptEvents += n
		}
	}
	if keptEvents != before.count(mover) || kept[markerKey] >= markers {
		t.Errorf("cell a stored %v of %s; want the %d events before the pause and fewer than the %d probes", kept, mover, before.count(mover), markers)
	}
}
