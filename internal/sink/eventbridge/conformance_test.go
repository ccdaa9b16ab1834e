package eventbridge

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/sinktest"
	"github.com/hubctl/hubctl/internal/testutil/eventbridgetest"
)

// envelopeIdentity maps the members of the CloudEvent envelope to the
// suite's attributes; time is read apart, to be normalised.
var envelopeIdentity = map[string]sinktest.Field{
	"id":              sinktest.EventID,
	"deliveryid":      sinktest.DeliveryID,
	"tenantid":        sinktest.TenantID,
	"eventkey":        sinktest.EventKey,
	"schemaversion":   sinktest.SchemaVersion,
	"type":            sinktest.CloudEventType,
	"subject":         sinktest.Subject,
	"datacontenttype": sinktest.DataContentType,
	"traceparent":     sinktest.TraceParent,
	"tracestate":      sinktest.TraceState,
}

func TestConformance(t *testing.T) {
	typ := NewType(Options{AllowPrivate: true})
	t.Cleanup(typ.CloseIdleConnections)
	object := func(extra map[string]any) map[string]any {
		obj := map[string]any{"event_bus": "orders", "region": "us-east-1", "access_key_id": testKeyID, "secret_access_key": testSecret}
		maps.Copy(obj, extra)
		return obj
	}
	at := func(t *testing.T, endpoint string) sink.Sink {
		return sinktest.Open(t, typ, object(map[string]any{"endpoint": endpoint}))
	}

	sinktest.Run(t, sinktest.Harness{
		Type:             typ,
		Object:           object(nil),
		SameDestination:  object(map[string]any{"access_key_id": "AKIAOTHERKEY00000002", "secret_access_key": "another/secret/access/key"}),
		OtherDestination: object(map[string]any{"event_bus": "invoices"}),
		Credentials:      []string{testKeyID, testSecret},
		Carries: []sinktest.Field{sinktest.Source, sinktest.CloudEventType, sinktest.Time, sinktest.Subject,
			sinktest.DataContentType, sinktest.TraceParent, sinktest.TraceState},

		Working: func(t *testing.T) (sink.Sink, sinktest.Inbox) {
			fake := newFake(t, "")
			return at(t, fake.URL()), func(t testing.TB) []sinktest.Message {
				var msgs []sinktest.Message
				for _, entry := range fake.Entries() {
					msgs = append(msgs, entryMessage(t, entry))
				}
				return msgs
			}
		},
		Failing: func(t *testing.T) sink.Sink {
			fake := newFake(t, "")
			// An answer quoting the key id, which the sink must not record.
			fake.RejectEntries(func(eventbridgetest.Entry) (string, string) {
				return "AccessDeniedException", "access key " + testKeyID + " may not put events on this bus"
			})
			return at(t, fake.URL())
		},
		Hanging: func(t *testing.T) sink.Sink {
			fake := newFake(t, "")
			fake.Hang()
			return at(t, fake.URL())
		},
		Unreachable: func(t *testing.T) sink.Sink { return at(t, "http://"+sinktest.ClosedAddr(t)) },
	})
}

// entryMessage normalises one PutEvents entry for the suite: the event
// data out of the envelope's data or data_base64 member, the identity out
// of the entry's Source and the envelope's other members.
func entryMessage(t testing.TB, entry eventbridgetest.Entry) sinktest.Message {
	t.Helper()
	var env map[string]json.RawMessage
	if err := json.Unmarshal([]byte(entry.Detail), &env); err != nil {
		t.Fatalf("Detail is not a JSON object: %v", err)
	}
	str := func(member string) (string, bool) {
		raw, present := env[member]
		if !present {
			return "", false
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Errorf("envelope member %s = %s, want a string", member, raw)
		}
		return s, true
	}

	identity := map[sinktest.Field]string{sinktest.Source: entry.Source}
	if source, _ := str("source"); source != entry.Source {
		t.Errorf("envelope source %q differs from the entry's Source %q", source, entry.Source)
	}
	for member, field := range envelopeIdentity {
		if value, present := str(member); present {
			identity[field] = value
		}
	}
	if value, present := str("time"); present {
		when, err := time.Parse(time.RFC3339Nano, value)
		if err != nil {
			t.Errorf("envelope time %q: %v", value, err)
		}
		identity[sinktest.Time] = sinktest.FormatTime(when)
	}

	var body []byte
	if data, present := env["data"]; present {
		body = data
	}
	if encoded, present := str("data_base64"); present {
		decoded, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			t.Errorf("data_base64 does not decode: %v", err)
		}
		body = decoded
	}
	return sinktest.Message{Body: body, Identity: identity}
}
