package eventbridge

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/sink"
)

// TestProbeNeedsARealAnswer: a custom endpoint that answers 200 without
// DescribeEventBus' answer for this bus does not verify.
func TestProbeNeedsARealAnswer(t *testing.T) {
	for name, body := range map[string]string{
		"empty 200":      "",
		"empty object":   "{}",
		"another bus":    `{"Name":"other","Arn":"arn:aws:events:us-east-1:123456789012:event-bus/other"}`,
		"a name, no ARN": `{"Name":"orders"}`,
	} {
		t.Run(name, func(t *testing.T) {
			server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/x-amz-json-1.1")
				_, _ = w.Write([]byte(body))
			}))
			t.Cleanup(server.Close)
			typ := NewType(Options{AllowPrivate: true})
			t.Cleanup(typ.CloseIdleConnections)
			cfg, err := typ.Parse(json.RawMessage(sinkObject(map[string]any{"endpoint": server.URL})))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			s, err := typ.Open(cfg, nil)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			err = s.Probe(t.Context(), sink.ProbeRequest{Timeout: 5 * time.Second})
			if err == nil {
				t.Fatalf("Probe passed against a server answering %q", body)
			}
			assertNoCredentials(t, "Probe error", err.Error())
		})
	}
}

func TestCheckDescribedBus(t *testing.T) {
	const arn = "arn:aws:events:us-east-1:123456789012:event-bus/orders"
	tests := []struct {
		bus, name, arn string
		ok             bool
	}{
		{"orders", "orders", arn, true},
		{arn, "orders", arn, true},
		{"orders", "", "", false},
		{"orders", "orders", "", false},
		{"orders", "other", arn, false},
		{arn, "orders", "arn:aws:events:us-east-1:123456789012:event-bus/other", false},
	}
	for _, tt := range tests {
		if err := checkDescribedBus(tt.bus, tt.name, tt.arn); (err == nil) != tt.ok {
			t.Errorf("checkDescribedBus(%q, %q, %q) = %v, want ok %v", tt.bus, tt.name, tt.arn, err, tt.ok)
		}
	}
}
