package webhook

import (
	"net/http"
	"testing"

	"github.com/hubctl/hubctl/internal/sink"
	"github.com/hubctl/hubctl/internal/sink/sinktest"
	whsign "github.com/hubctl/hubctl/pkg/webhook"
)

// webhookIdentity maps the delivery headers (docs/consuming.md) to the suite's attributes.
var webhookIdentity = map[string]sinktest.Field{
	whsign.HeaderEventID:       sinktest.EventID,
	whsign.HeaderDeliveryID:    sinktest.DeliveryID,
	whsign.HeaderTenantID:      sinktest.TenantID,
	whsign.HeaderEventType:     sinktest.EventKey,
	whsign.HeaderSchemaVersion: sinktest.SchemaVersion,
	"Content-Type":             sinktest.DataContentType,
	"Traceparent":              sinktest.TraceParent,
	"Tracestate":               sinktest.TraceState,
}

func TestConformance(t *testing.T) {
	typ := newTestType(t, Options{AllowPrivate: true})
	open := func(t *testing.T, url string) sink.Sink {
		return sinktest.Open(t, typ, map[string]any{"url": url}, newSecret)
	}
	sinktest.Run(t, sinktest.Harness{
		Type:             typ,
		Object:           map[string]any{"url": "https://hooks.example.com/in?token=" + queryToken},
		SameDestination:  map[string]any{"url": "https://Hooks.Example.com:443/elsewhere?token=another-token"},
		OtherDestination: map[string]any{"url": "https://hooks.example.com:8443/in?token=" + queryToken},
		Secrets:          []string{queryToken, newSecret},
		Carries:          []sinktest.Field{sinktest.DataContentType, sinktest.TraceParent, sinktest.TraceState},

		Working: func(t *testing.T) (sink.Sink, sinktest.Inbox) {
			rcv := startReceiver(t, nil)
			return open(t, rcv.hookURL()), func(testing.TB) []sinktest.Message {
				var msgs []sinktest.Message
				for _, req := range rcv.Requests() {
					identity := map[sinktest.Field]string{}
					for header, field := range webhookIdentity {
						if values := req.Header.Values(header); len(values) > 0 {
							identity[field] = values[0]
						}
					}
					msgs = append(msgs, sinktest.Message{Body: req.Body, Identity: identity})
				}
				return msgs
			}
		},
		Failing: func(t *testing.T) sink.Sink {
			rcv := startReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "out of order", http.StatusInternalServerError)
			})
			return open(t, rcv.hookURL())
		},
		Hanging: func(t *testing.T) sink.Sink {
			return open(t, "http://"+sinktest.NewBlackhole(t).Addr()+"/hooks?token="+queryToken)
		},
		Unreachable: func(t *testing.T) sink.Sink {
			return open(t, "http://"+sinktest.ClosedAddr(t)+"/hooks?token="+queryToken)
		},
	})
}
