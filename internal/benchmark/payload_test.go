package benchmark

import (
	"encoding/json"
	"testing"
	"time"
)

func TestPayload(t *testing.T) {
	sent := time.Date(2026, 12, 2, 0, 0, 0, 123456789, time.UTC)
	tests := []struct {
		name     string
		size     int
		wantSize int
	}{
		{"the default KiB", 1024, 1024},
		{"exactly the minimum", MinPayloadBytes, MinPayloadBytes},
		{"below the minimum is the minimum", 1, MinPayloadBytes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Payload(tt.size, sent)
			if len(p) != tt.wantSize {
				t.Errorf("len = %d, want %d", len(p), tt.wantSize)
			}
			if !json.Valid(p) {
				t.Errorf("not JSON: %s", p)
			}
			got, ok := SentAt(p)
			if !ok || !got.Equal(sent) {
				t.Errorf("SentAt = %v, %v; want %v", got, ok, sent)
			}
		})
	}
}

func TestSentAtRefusesOtherBodies(t *testing.T) {
	for _, body := range []string{``, `{}`, `{"bench_sent_ns":12`, `{"bench_sent_ns":x1,"pad":""}`, `{"amount":1}`} {
		if _, ok := SentAt([]byte(body)); ok {
			t.Errorf("SentAt(%q) found a time", body)
		}
	}
}
