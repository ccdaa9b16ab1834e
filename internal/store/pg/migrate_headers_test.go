package pg_test

import (
	"slices"
	"testing"

	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

// Migration 23's down puts back, in SQL, the header values ingest kept as
// references to the attribute columns, exactly as internal/event restores
// them: a binary that predates the references reads every header again.
func TestHeaderReferencesMigrationDownRestoresEveryValue(t *testing.T) {
	t.Parallel()
	dsn := pgtest.EmptyDSN(t)
	versions := embeddedVersions(t)
	at := slices.Index(versions, 23)
	if at < 0 {
		t.Fatal("migration 23 is not embedded")
	}
	mg := newMigrator(t, dsn)
	if err := mg.To(versions[at]); err != nil {
		t.Fatal(err)
	}
	h := func(k, v string) event.Header { return event.Header{Key: k, Value: []byte(v)} }
	cases := [][]event.Header{
		{
			h("ce-specversion", "1.0"), h("ce-id", "0190b6a2-7c1e-7d3a-9f00-000000000001"), h("ce-source", "midaz"),
			h("ce-type", "studio.lerian.transaction.posted"), h("ce-time", "2026-11-29T12:00:00.12345Z"),
			h("ce-schemaversion", "1.2.0"), h("ce-resourcetype", "transaction"), h("ce-eventtype", "posted"),
			h("ce-tenantid", "acme"), h("ce-subject", "tx-1"), h("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
			h("tracestate", "k=v"), h("Content-Type", "application/json"), h("ce-dataschema", "https://schemas.example/t"),
			{Key: "x-null", Value: nil}, h("ce-ext", "e"),
		},
		{
			h("CE_SPECVERSION", "1.0"), h("ce_id", "0190b6a2-7c1e-7d3a-9f00-000000000002"), h("ce_source", "midaz"),
			h("ce_type", "studio.lerian.transaction.posted"), h("ce_time", "2026-11-29T12:00:00Z"),
			h("ce_schemaversion", "1.2.0"), h("ce_resourcetype", "transaction"), h("ce_eventtype", "posted"),
			h("ce_tenantid", "acme"), h("ce_datacontenttype", "text/plain"), h("ce_traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
			h("ce_tracestate", "a=b"),
		},
	}
	conn := connect(t, dsn)
	if _, err := conn.Exec(t.Context(), `INSERT INTO tenants (id) VALUES ('acme')`); err != nil {
		t.Fatal(err)
	}
	for n, headers := range cases {
		ev, v, ok := event.Parse(headers, []byte(`{}`), event.Options{})
		if !ok {
			t.Fatalf("case %d does not parse: %v", n, v)
		}
		s := ev.Stored()
		mask := event.DerivedHeaders(s, headers)
		if mask == 0 {
			t.Fatalf("case %d: no header is a reference", n)
		}
		keys, values := make([][]byte, len(headers)), make([][]byte, len(headers))
		for i, h := range headers {
			keys[i], values[i] = []byte(h.Key), h.Value
			if mask&(1<<i) != 0 {
				values[i] = nil
			}
		}
		_, err := conn.Exec(t.Context(), `
INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time, subject, datacontenttype,
                    dataschema, traceparent, tracestate, header_keys, header_values, header_derived, payload, topic, kafka_partition, kafka_offset)
VALUES ($1, $2, $3, $4, 1, $5, $6, $7, nullif($8, ''), nullif($9, ''), nullif($10, ''), nullif($11, ''), nullif($12, ''),
        $13, $14, $15, '{}', 'topic', 0, $16)`,
			ev.TenantID, ev.ID, ev.Key, ev.SchemaVersion, ev.Source, ev.Type, ev.Time, ev.Subject, ev.DataContentType,
			ev.DataSchema, ev.TraceParent, ev.TraceState, keys, values, int64(mask), n)
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := mg.To(versions[at-1]); err != nil {
		t.Fatalf("migrate down from 23: %v", err)
	}
	for n, headers := range cases {
		var values [][]byte
		if err := conn.QueryRow(t.Context(), `SELECT header_values FROM events WHERE kafka_offset = $1`, n).Scan(&values); err != nil {
			t.Fatal(err)
		}
		for i, h := range headers {
			if string(values[i]) != string(h.Value) || (values[i] == nil) != (h.Value == nil) {
				t.Errorf("case %d header %d %s = %q after the down migration, want %q", n, i, h.Key, values[i], h.Value)
			}
		}
	}
}
