package event

import (
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/conformance"
)

// recordOf is the case as the Kafka record ingest receives.
func recordOf(c conformance.IngestCase) ([]Header, []byte) {
	headers := make([]Header, len(c.Headers))
	for i, h := range c.Headers {
		headers[i] = Header{Key: h[0], Value: []byte(h[1])}
	}
	return headers, c.Value()
}

// lookups models the state the vectors describe: the roster and the events
// already in the inbox.
func lookups(t testing.TB, v conformance.IngestVerdicts) (RosterLookup, InboxLookup) {
	t.Helper()
	roster := make(map[string]TenantStatus, len(v.Roster))
	for tenant, status := range v.Roster {
		switch status {
		case "active":
			roster[tenant] = TenantActive
		case "inactive":
			roster[tenant] = TenantInactive
		default:
			t.Fatalf("roster: tenant %q has unknown status %q", tenant, status)
		}
	}
	stored := make(map[[2]string]bool, len(v.StoredEvents))
	for _, e := range v.StoredEvents {
		stored[[2]string{e.TenantID, strings.ToLower(e.ID)}] = true
	}
	return func(tenant string) TenantStatus { return roster[tenant] },
		func(tenant, id string) bool { return stored[[2]string{tenant, id}] }
}

// TestConformance runs every case of the shared ingest vectors through the
// full rule order.
func TestConformance(t *testing.T) {
	vectors, err := conformance.LoadIngestVerdicts()
	if err != nil {
		t.Fatal(err)
	}
	roster, inbox := lookups(t, vectors)
	// The about text fixes the prefix; the maximum is a field of the file.
	opts := Options{TypePrefix: "studio.lerian.", MaxEventBytes: vectors.MaxEventBytes}

	names := make(map[string]bool, len(vectors.Cases))
	for _, c := range vectors.Cases {
		if names[c.Name] {
			t.Fatalf("case name %q is not unique", c.Name)
		}
		names[c.Name] = true

		t.Run(c.Name, func(t *testing.T) {
			headers, value := recordOf(c)
			ev, v := Decide(headers, value, opts, roster, inbox)
			if v.Kind != Kind(c.Expect) || v.Reason != Reason(c.Reason) {
				t.Fatalf("verdict %s, want %s %s", v, c.Expect, c.Reason)
			}
			if v.Kind != Accept {
				if v.Detail == "" {
					t.Error("a rejection has no detail")
				}
				return
			}
			if ev.Key != c.EventKey {
				t.Errorf("event key %q, want %q", ev.Key, c.EventKey)
			}
			if ev.SchemaMajor != c.SchemaMajor {
				t.Errorf("schema major %d, want %d", ev.SchemaMajor, c.SchemaMajor)
			}
			if string(ev.Data) != string(value) {
				t.Errorf("data %q, want the record value %q", ev.Data, value)
			}
		})
	}
}
