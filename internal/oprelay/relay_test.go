package oprelay

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/event"
	opstore "github.com/hubctl/hubctl/internal/store/opevents"
)

// A relayed record is a CloudEvent in binary mode that the hub's own
// ingest rules accept (were it to read the topic), keyed by tenant.
func TestRecordIsABinaryModeCloudEventKeyedByTenant(t *testing.T) {
	e := opstore.Event{
		ID: uuid.Must(uuid.NewV7()), TenantID: "acme", Key: "hub.subscription_failing", Type: "studio.lerian.hub.subscription_failing",
		Time: time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC), Data: []byte(`{"subscription_id":"s"}`),
	}
	r := Record("hub.operational", e, "0190b6a2-7c1e-7d3a-9f00-000000000001")
	if r.Topic != "hub.operational" || string(r.Key) != "acme" || string(r.Value) != string(e.Data) {
		t.Fatalf("record topic %q key %q value %s", r.Topic, r.Key, r.Value)
	}
	headers := make([]event.Header, len(r.Headers))
	for i, h := range r.Headers {
		headers[i] = event.Header{Key: h.Key, Value: h.Value}
	}
	parsed, rejected, ok := event.Parse(headers, r.Value, event.Options{})
	if !ok {
		t.Fatalf("rejected: %+v", rejected)
	}
	if parsed.ID != e.ID.String() || parsed.Key != e.Key || parsed.TenantID != "acme" || parsed.Source != "hubctl" ||
		parsed.Subject != "0190b6a2-7c1e-7d3a-9f00-000000000001" || parsed.SchemaVersion != "1.0.0" || !parsed.Time.Equal(e.Time) ||
		parsed.DataContentType != "application/json" {
		t.Errorf("parsed %+v", parsed)
	}
}
