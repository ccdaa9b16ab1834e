package sqs

import (
	"encoding/base64"
	"testing"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/sinktest"
	"github.com/hubctl/hubctl/internal/testutil/goawstest"
)

// sqsIdentity maps the message attributes (docs/concepts.md, Sinks) to the suite's.
var sqsIdentity = map[string]sinktest.Field{
	sink.AttrEventID:       sinktest.EventID,
	sink.AttrDeliveryID:    sinktest.DeliveryID,
	sink.AttrTenantID:      sinktest.TenantID,
	sink.AttrEventType:     sinktest.EventKey,
	sink.AttrSchemaVersion: sinktest.SchemaVersion,
	sink.AttrTraceParent:   sinktest.TraceParent,
	sink.AttrTraceState:    sinktest.TraceState,
}

func TestConformance(t *testing.T) {
	for _, queue := range []struct {
		name string
		fifo bool
	}{{"standard queue", false}, {"FIFO queue", true}} {
		t.Run(queue.name, func(t *testing.T) {
			sinktest.Run(t, conformanceHarness(t, queue.fifo))
		})
	}
}

func conformanceHarness(t *testing.T, fifo bool) sinktest.Harness {
	g := goawstest.Start(t)
	typ := NewType(Options{AllowPrivate: true})
	t.Cleanup(typ.CloseIdleConnections)
	suffix := ""
	if fifo {
		suffix = fifoSuffix
	}
	object := func(queueURL, endpoint string) map[string]any {
		obj := map[string]any{
			"queue_url": queueURL, "region": goawstest.Region,
			"access_key_id": testKeyID, "secret_access_key": testSecret,
		}
		if endpoint != "" {
			obj["endpoint"] = endpoint
		}
		return obj
	}
	// at opens a sink on a server that is not goaws; the queue URL only
	// names the queue.
	at := func(t *testing.T, addr string) sink.Sink {
		endpoint := "http://" + addr
		return sinktest.Open(t, typ, object(endpoint+"/"+goawstest.AccountID+"/orders"+suffix, endpoint))
	}
	sameQueueOtherKeys := object("https://sqs.us-east-1.amazonaws.com/123456789012/orders"+suffix, "")
	sameQueueOtherKeys["access_key_id"], sameQueueOtherKeys["secret_access_key"] = "AKIAOTHERKEY00000002", "another/secret/access/key"

	return sinktest.Harness{
		Type:             typ,
		Object:           object("https://sqs.us-east-1.amazonaws.com/123456789012/orders"+suffix, ""),
		SameDestination:  sameQueueOtherKeys,
		OtherDestination: object("https://sqs.us-east-1.amazonaws.com/123456789012/invoices"+suffix, ""),
		Credentials:      []string{testKeyID, testSecret},
		Carries:          []sinktest.Field{sinktest.TraceParent, sinktest.TraceState},

		Working: func(t *testing.T) (sink.Sink, sinktest.Inbox) {
			queueURL := g.NewQueue(t, fifo)
			return sinktest.Open(t, typ, object(queueURL, g.Endpoint())), func(t testing.TB) []sinktest.Message {
				return inboxMessages(t, g.Receive(t, queueURL))
			}
		},
		Failing: func(t *testing.T) sink.Sink {
			return sinktest.Open(t, typ, object(g.MissingQueueURL()+suffix, g.Endpoint()))
		},
		Hanging:     func(t *testing.T) sink.Sink { return at(t, sinktest.NewBlackhole(t).Addr()) },
		Unreachable: func(t *testing.T) sink.Sink { return at(t, sinktest.ClosedAddr(t)) },
	}
}

// inboxMessages normalises received messages for the suite: the body
// decoded when the sink base64-encoded it, the identity from attributes.
func inboxMessages(t testing.TB, received []goawstest.Message) []sinktest.Message {
	t.Helper()
	var msgs []sinktest.Message
	for _, m := range received {
		identity := map[sinktest.Field]string{}
		for name, attr := range m.Attributes {
			if attr.DataType != stringType {
				t.Errorf("attribute %s has data type %q, want String", name, attr.DataType)
			}
			if field, ok := sqsIdentity[name]; ok {
				identity[field] = attr.StringValue
			}
		}
		body := []byte(m.Body)
		if m.Attributes[AttrBodyEncoding].StringValue == BodyEncodingBase64 {
			decoded, err := base64.StdEncoding.DecodeString(m.Body)
			if err != nil {
				t.Errorf("body marked base64 does not decode: %v", err)
			}
			body = decoded
		}
		msgs = append(msgs, sinktest.Message{Body: body, Identity: identity})
	}
	return msgs
}
