package ingest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/filter"
)

// hostileFilters are the most expensive filters the API accepts, each
// aimed at a different limit: strings built by concatenation (cost per
// byte), passes over a long list (the deadline) and a regular expression
// over a large string.
var hostileFilters = []string{
	"size(" + strings.TrimSuffix(strings.Repeat("data.blob + ", 12), " + ") + ") > 0",
	`data.items.all(i, i.startsWith("x") || i.endsWith("y") || size(i) > 30)`,
	`data.items.filter(i, i.startsWith("a")).size() > 0`,
	`data.items.map(i, size(i)).exists(n, n > 30) && data.blob.endsWith("q")`,
	`data.blob.matches("^(a|b|c|d|e|f|g|h)*x$")`,
}

// hostilePayload is a JSON event of about 900 KB: a long string and a long
// list of short strings.
func hostilePayload() []byte {
	items := make([]string, 40_000)
	for i := range items {
		items[i] = fmt.Sprintf("%q", fmt.Sprintf("it%06d", i))
	}
	return []byte(`{"blob": "` + strings.Repeat("x", 400_000) + `", "items": [` + strings.Join(items, ",") + `]}`)
}

// TestHostileFiltersDoNotDelayAnotherTenant: a tenant whose ten
// subscriptions run the worst filters on every one of a stream of 900 KB
// events, on the same partition as a quiet tenant, must not move the quiet
// tenant's ingest latency (produce to stored) by more than a few
// milliseconds over what the same hostile stream costs with filters that
// do nothing. The figures are medians of the same run, so the machine's
// speed cancels out.
func TestHostileFiltersDoNotDelayAnotherTenant(t *testing.T) {
	if testing.Short() {
		t.Skip("a latency comparison over three phases")
	}
	e := newEnv(t)
	e.allowLargeRecords(testTopic)
	e.addTenants("quiet", "hostile")
	addSub := func(tenant, filter string) string {
		var id string
		err := e.store.Pool.QueryRow(t.Context(), `
INSERT INTO subscriptions (id, tenant_id, name, sink_type, destination, event_types, schema_major, enabled, verification_state, filter)
VALUES (gen_random_uuid(), $1, gen_random_uuid()::text, 'sqs', 'somewhere', '{*}', 1, true, 'active', nullif($2, ''))
RETURNING id::text`, tenant, filter).Scan(&id)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	for _, f := range hostileFilters {
		if _, err := filter.Compile(f); err != nil {
			t.Fatalf("the API refuses %q, not one of the worst it accepts: %v", f, err)
		}
	}
	addSub("quiet", "")
	var hostile []string
	for range 10 {
		hostile = append(hostile, addSub("hostile", `subject != "never"`))
	}
	e.start(func(o *Options) {
		// The production defaults (internal/config, FILTER_*).
		o.Ingest.FilterEvalTimeout = 5 * time.Millisecond
		o.Ingest.FilterTenantBudget = 20 * time.Millisecond
	})

	next := 0
	// One round: a burst of the hostile tenant's events, then one of the
	// quiet tenant's on the same partition; the quiet event's latency runs
	// from its produce to its row being stored. The round ends when the
	// burst is stored too, so rounds do not queue behind each other.
	round := func(burst int, payload []byte) time.Duration {
		var records []*kgo.Record
		for range burst {
			next++
			records = append(records, cloudEvent(0, "hostile", eventID(next), payload))
		}
		e.produce(records...)
		next++
		id := eventID(next)
		start := time.Now()
		e.produce(cloudEvent(0, "quiet", id, []byte(`{"n": 1}`)))
		for e.count(`SELECT count(*) FROM events WHERE tenant_id = 'quiet' AND id = $1`, id) == 0 {
			time.Sleep(time.Millisecond)
		}
		latency := time.Since(start)
		e.waitStored(testTopic, int64(next))
		return latency
	}
	median := func(burst int, payload []byte) time.Duration {
		var d []time.Duration
		for range 7 {
			d = append(d, round(burst, payload))
		}
		slices.Sort(d)
		return d[len(d)/2]
	}
	payload := hostilePayload()

	const burst = 10
	median(burst, payload) // warm up
	idle := median(0, nil)
	cheap := median(burst, payload)
	for i, id := range hostile {
		e.exec(`UPDATE subscriptions SET filter = $2, updated_at = clock_timestamp() WHERE id = $1`, id, hostileFilters[i%len(hostileFilters)])
	}
	worst := median(burst, payload)
	t.Logf("quiet tenant's median ingest latency: idle %v, behind %d hostile events with cheap filters %v, with the worst filters %v", idle, burst, cheap, worst)

	if failed := e.count(`SELECT count(*) FROM delivery_jobs WHERE tenant_id = 'hostile' AND dead_reason = 'filter_error'`); failed == 0 {
		t.Error("the worst filters failed on no event: they were not run")
	}
	// A few milliseconds of slack over the same stream with cheap filters,
	// plus a ratio for the noise of a shared machine.
	if limit := cheap*3/2 + 30*time.Millisecond; worst > limit {
		t.Errorf("the worst filters moved the quiet tenant's latency to %v, over %v (1.5 × %v + 30ms)", worst, limit, cheap)
	}
}
