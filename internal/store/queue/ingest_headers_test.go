package queue

import (
	"context"
	"testing"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/event"
)

// The inbox keeps a header whose value the attribute columns determine as a
// reference to them, and reading the event gives back every header byte
// for byte: references, copies (an id in capitals, a time to the
// nanosecond, a repeat that differs), empty and null values alike.
func TestInboxKeepsAttributeHeadersAsReferencesAndReadsThemBackExactly(t *testing.T) {
	st := ingestStore(t)
	ctx := context.Background()
	h := func(k, v string) event.Header { return event.Header{Key: k, Value: []byte(v)} }
	plain := eventHeaders("acme", testEventID(1))
	copies := []event.Header{
		h("CE_SPECVERSION", "1.0"), h("ce_id", "0190B6A2-7C1E-7D3A-9F00-000000000002"), h("ce_source", "midaz"),
		h("ce_type", "studio.lerian.transaction.posted"), h("ce_time", "2026-11-29T12:00:00.123456789Z"),
		h("ce_schemaversion", "1.2.0"), h("ce_resourcetype", "transaction"), h("ce_eventtype", "posted"),
		h("ce_tenantid", "acme"), h("Content-Type", "application/json"), h("ce-source", "midaz"),
		h("ce-myextension", "x"), h("empty", ""), {Key: "x-null-value", Value: nil},
	}
	records := []IngestRecord{accepted(t, 0, "acme", testEventID(1), []byte(`{"n":1}`))}
	ev, v, ok := event.Parse(copies, []byte(`{"n":2}`), event.Options{})
	if !ok {
		t.Fatalf("second event does not parse: %v", v)
	}
	records = append(records, IngestRecord{Offset: 1, Headers: copies, Value: []byte(`{"n":2}`), Verdict: event.Accepted(), Event: ev})
	writeBatch(t, st, batchOf(0, 2, records...))

	for _, tc := range []struct {
		id         string
		headers    []event.Header
		references int64
	}{
		{testEventID(1), plain, 10}, // the nine attributes and traceparent; not the null value
		{testEventID(2), copies, 9}, // not the id in capitals, the nanoseconds, the extension, the empty and null values
	} {
		got, err := st.GetInboxEvent(ctx, "acme", uuid.MustParse(tc.id))
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Headers) != len(tc.headers) {
			t.Fatalf("event %s: %d headers, want %d", tc.id, len(got.Headers), len(tc.headers))
		}
		for i, want := range tc.headers {
			g := got.Headers[i]
			if string(g.Key) != want.Key || string(g.Value) != string(want.Value) || (g.Value == nil) != (want.Value == nil) {
				t.Errorf("event %s header %d = %q: %q, want %q: %q", tc.id, i, g.Key, g.Value, want.Key, want.Value)
			}
		}
		stored := queryCount(t, st, `SELECT count(*) FROM events e, unnest(e.header_values) v WHERE e.id = $1 AND v IS NULL`, tc.id)
		nulls := int64(0)
		for _, h := range tc.headers {
			if h.Value == nil {
				nulls++
			}
		}
		if stored-nulls != tc.references {
			t.Errorf("event %s keeps %d header values as references, want %d", tc.id, stored-nulls, tc.references)
		}
	}
}
