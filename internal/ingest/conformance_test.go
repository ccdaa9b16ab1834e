package ingest

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/conformance"
)

// TestConformanceVectorsThroughKafka runs every ingest vector through the
// whole path: a Kafka record, the consumer, the batch write, and the outcome
// in the inbox, the quarantine or the discard counter.
//
// The cases are produced one at a time to one partition, each checked once
// its offset is stored. Several accepted cases share an event id, so each
// accepted event is removed after its check: every case meets the state the
// vectors describe, not the leftovers of the cases before it.
func TestConformanceVectorsThroughKafka(t *testing.T) {
	vectors, err := conformance.LoadIngestVerdicts()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	e.allowLargeRecords(testTopic) // for the payload_too_large case
	for tenant, status := range vectors.Roster {
		e.exec(`INSERT INTO tenants (id, status) VALUES ($1, $2)`, tenant, status)
	}
	for _, ev := range vectors.StoredEvents {
		// The inbox row and its id, as ingest stores them.
		e.exec(`
WITH ev AS (
    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
    VALUES ($1, $2, 'transaction.posted', '1.0.0', 1, 'midaz', 'studio.lerian.transaction.posted', now(),
            '{}', '{}', '', 'lerian.streaming.earlier', 0, 0)
    RETURNING tenant_id, id, seq)
INSERT INTO event_ids (tenant_id, id, seq) SELECT * FROM ev`, ev.TenantID, ev.ID)
	}
	m := e.start(func(o *Options) { o.Ingest.MaxEventBytes = vectors.MaxEventBytes })

	const partition = 0
	for i, c := range vectors.Cases {
		offset := int64(i)
		rec := &kgo.Record{Topic: testTopic, Partition: partition, Value: c.Value()}
		for _, h := range c.Headers {
			rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h[0], Value: []byte(h[1])})
		}
		before := m.metric(t, "streaming_hub_ingest_records_total", "verdict", c.Expect, "reason", c.Reason)
		e.produce(rec)
		e.waitStored(testTopic, offset+1)

		got := m.settledMetric(t, before+1, "streaming_hub_ingest_records_total", "verdict", c.Expect, "reason", c.Reason) - before
		if got != 1 {
			t.Errorf("%s: records_total{verdict=%q,reason=%q} rose by %v, want 1", c.Name, c.Expect, c.Reason, got)
		}
		inbox := e.count(`SELECT count(*) FROM events WHERE topic = $1 AND kafka_offset = $2`, testTopic, offset)
		quarantined := e.count(`SELECT count(*) FROM quarantine WHERE topic = $1 AND kafka_offset = $2`, testTopic, offset)
		switch c.Expect {
		case "accept":
			n := e.count(`SELECT count(*) FROM events WHERE topic = $1 AND kafka_offset = $2 AND event_key = $3 AND schema_major = $4`,
				testTopic, offset, c.EventKey, c.SchemaMajor)
			if n != 1 || quarantined != 0 {
				t.Errorf("%s: %d inbox rows with key %q and major %d, %d quarantine rows; want 1 and 0",
					c.Name, n, c.EventKey, c.SchemaMajor, quarantined)
			}
			// Forgotten again, id included, so a later case may reuse the id.
			e.exec(`
WITH gone AS (DELETE FROM events WHERE topic = $1 AND kafka_offset = $2 RETURNING tenant_id, id)
DELETE FROM event_ids i USING gone WHERE i.tenant_id = gone.tenant_id AND i.id = gone.id`, testTopic, offset)
		case "quarantine":
			n := e.count(`SELECT count(*) FROM quarantine WHERE topic = $1 AND kafka_offset = $2 AND reason = $3`, testTopic, offset, c.Reason)
			if n != 1 || inbox != 0 {
				t.Errorf("%s: %d quarantine rows with reason %q, %d inbox rows; want 1 and 0", c.Name, n, c.Reason, inbox)
			}
		case "discard":
			if inbox != 0 || quarantined != 0 {
				t.Errorf("%s: discarded record stored (%d inbox rows, %d quarantine rows)", c.Name, inbox, quarantined)
			}
		default:
			t.Fatalf("%s: unknown expectation %q", c.Name, c.Expect)
		}
	}
	if n := e.count(`SELECT count(*) FROM events`); n != int64(len(vectors.StoredEvents)) {
		t.Errorf("inbox holds %d events after the run, want only the %d stored beforehand", n, len(vectors.StoredEvents))
	}
}
