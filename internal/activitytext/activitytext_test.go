package activitytext

import (
	"encoding/json"
	"testing"
)

func TestSummaryAndActor(t *testing.T) {
	for _, tc := range []struct {
		key, data, summary, actor string
	}{
		{"hub.subscription_created", `{"sink_type":"kafka","actor":{"kind":"portal","session":"s1"}}`, "kafka sink", "portal"},
		{"hub.subscription_updated", `{"changed":["name","sink"],"actor":{"kind":"api_key","id":"k1"}}`, "changed name, sink", "key k1"},
		{"hub.subscription_disabled", `{"trigger":"automatic","actor":{"kind":"hub"}}`, "automatic", "hub"},
		{"hub.subscription_failing", `{"consecutive_failures":5,"last_status":503,"last_error":"503 Service Unavailable","actor":{"kind":"hub"}}`,
			"5 consecutive failures, last 503 503 Service Unavailable", "hub"},
		{"hub.deliveries_dead_lettered", `{"count":3,"reason":"exhausted","since":"2026-12-05T10:00:00Z","actor":{"kind":"hub"}}`,
			"3 dead (exhausted) since 2026-12-05T10:00:00Z", "hub"},
		{"hub.verification_failed", `{"error":"connection refused","actor":{"kind":"admin"}}`, "connection refused", "admin"},
		{"hub.subscription_deleted", `{"actor":{"kind":"admin"}}`, "", "admin"},
		{"hub.subscription_enabled", `{}`, "", ""},
	} {
		var d map[string]any
		if err := json.Unmarshal([]byte(tc.data), &d); err != nil {
			t.Fatal(err)
		}
		if got := Summary(tc.key, d); got != tc.summary {
			t.Errorf("Summary(%s, %s) = %q, want %q", tc.key, tc.data, got, tc.summary)
		}
		if got := Actor(d["actor"]); got != tc.actor {
			t.Errorf("Actor(%s) = %q, want %q", tc.data, got, tc.actor)
		}
	}
}
