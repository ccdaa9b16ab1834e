package service

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/store/catalog"

	"github.com/google/uuid"

	"github.com/hubctl/hubctl/internal/opevents"
)

func TestChangeEvents(t *testing.T) {
	expires := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	row := catalog.Subscription{
		ID: uuid.MustParse("0190b6a2-7c1e-7d3a-9f00-000000000001"), TenantID: "acme", Name: "orders", SinkType: "webhook",
		SinkConfig: json.RawMessage(`{"url":"https://a.example"}`), Destination: "https://a.example:443",
		EventTypes: []string{"transaction.*"}, SchemaMajor: 1, Enabled: true, VerificationState: "active",
		SigningSecret: "v1:k:old", AttemptTimeout: 10 * time.Second,
	}
	edit := func(f func(*catalog.Subscription)) catalog.Subscription {
		c := row
		f(&c)
		return c
	}
	for _, tc := range []struct {
		name          string
		before, after catalog.Subscription
		want          string
	}{
		{"create", catalog.Subscription{}, row, "hub.subscription_created map[event_types:[transaction.*] sink_type:webhook]"},
		{"delete", row, catalog.Subscription{}, "hub.subscription_deleted map[]"},
		{"rename and new types", row, edit(func(s *catalog.Subscription) { s.Name, s.EventTypes = "o", []string{"hub.*"} }),
			"hub.subscription_updated map[changed:[name event_types]]"},
		{"a new sink credential is the sink, never its value", row, edit(func(s *catalog.Subscription) { s.SinkCredentials = "v1:k:new" }),
			"hub.subscription_updated map[changed:[sink]]"},
		{"disable", row, edit(func(s *catalog.Subscription) { s.Enabled = false }),
			"hub.subscription_disabled map[failing_since:<nil> last_failure_at:<nil> trigger:manual]"},
		{"enable", edit(func(s *catalog.Subscription) { s.Enabled = false }), row, "hub.subscription_enabled map[]"},
		{"rotate", row, edit(func(s *catalog.Subscription) {
			s.SigningSecret, s.PreviousSecret, s.PreviousSecretExpiresAt = "v1:k:new", "v1:k:old", &expires
		}),
			fmt.Sprintf("hub.secret_rotated map[previous_secret_expires_at:%v]", &expires)},
		{"verification fails", row, edit(func(s *catalog.Subscription) { s.VerificationState, s.VerificationError = "failed", "refused" }),
			"hub.verification_failed map[error:refused]"},
		{"verification fails again the same way", edit(func(s *catalog.Subscription) { s.VerificationState, s.VerificationError = "failed", "refused" }),
			edit(func(s *catalog.Subscription) { s.VerificationState, s.VerificationError = "failed", "refused" }), ""},
		{"verification succeeds", edit(func(s *catalog.Subscription) { s.VerificationState = "pending" }), row, ""},
		{"the hub's own bookkeeping", row, edit(func(s *catalog.Subscription) { s.VerifiedAt, s.UpdatedAt = &expires, expires }), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			for _, e := range changeEvents(tc.before, tc.after) {
				got += fmt.Sprintf("%s %v", e.key, fieldsText(e.fields))
			}
			if got != tc.want {
				t.Fatalf("got %q\nwant %q", got, tc.want)
			}
		})
	}
	if keys := opevents.Keys; len(keys) != 10 {
		t.Fatalf("%d event keys, SPEC §11 names ten", len(keys))
	}
}

// fieldsText prints fields with pointers to times dereferenced.
func fieldsText(fields map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range fields {
		if p, ok := v.(*time.Time); ok && p == nil {
			v = nil
		}
		out[k] = v
	}
	return out
}
