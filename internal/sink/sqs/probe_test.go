package sqs

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/sink"
)

// TestProbeNeedsARealAnswer: a custom endpoint that answers 200 without
// GetQueueAttributes' answer for this queue does not verify.
func TestProbeNeedsARealAnswer(t *testing.T) {
	for name, body := range map[string]string{
		"empty 200":     "",
		"empty object":  "{}",
		"another queue": `{"Attributes":{"QueueArn":"arn:aws:sqs:us-east-1:100010001000:other"}}`,
		"not an ARN":    `{"Attributes":{"QueueArn":"orders"}}`,
		"an SNS ARN":    `{"Attributes":{"QueueArn":"arn:aws:sns:us-east-1:100010001000:orders"}}`,
		"HTML":          "<html>ok</html>",
	} {
		t.Run(name, func(t *testing.T) {
			server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/x-amz-json-1.0")
				_, _ = w.Write([]byte(body))
			}))
			t.Cleanup(server.Close)
			s := openSink(t, NewType(Options{AllowPrivate: true}), server.URL+"/100010001000/orders", server.URL)
			err := s.Probe(t.Context(), sink.ProbeRequest{Timeout: 5 * time.Second})
			if err == nil {
				t.Fatalf("Probe passed against a server answering %q", body)
			}
			if strings.Contains(err.Error(), testSecret) || strings.Contains(err.Error(), testKeyID) {
				t.Fatalf("probe error %q quotes a credential", err)
			}
		})
	}
}

func TestCheckQueueARN(t *testing.T) {
	tests := []struct {
		url, arn string
		ok       bool
	}{
		{"https://sqs.us-east-1.amazonaws.com/123456789012/orders", "arn:aws:sqs:us-east-1:123456789012:orders", true},
		{"https://sqs.us-east-1.amazonaws.com/123456789012/orders.fifo", "arn:aws:sqs:us-east-1:123456789012:orders.fifo", true},
		{"http://127.0.0.1:4100/100010001000/q", "arn:aws-cn:sqs:cn-north-1:100010001000:q", true},
		{"https://sqs.us-east-1.amazonaws.com/123456789012/orders", "", false},
		{"https://sqs.us-east-1.amazonaws.com/123456789012/orders", "arn:aws:sqs:us-east-1:123456789012:orders-dlq", false},
		{"https://sqs.us-east-1.amazonaws.com/123456789012/orders", "arn:aws:sqs:us-east-1:123456789012:x:orders", false},
	}
	for _, tt := range tests {
		if err := checkQueueARN(tt.url, tt.arn); (err == nil) != tt.ok {
			t.Errorf("checkQueueARN(%q, %q) = %v, want ok %v", tt.url, tt.arn, err, tt.ok)
		}
	}
}
