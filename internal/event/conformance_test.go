package event

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/conformance"
)

// ingestVectors is testdata/conformance/ingest-verdicts.json.
type ingestVectors struct {
	About        string            `json:"about"`
	Roster       map[string]string `json:"roster"`
	StoredEvents []struct {
		TenantID string `json:"tenant_id"`
		ID       string `json:"id"`
	} `json:"stored_events"`
	MaxEventBytes int            `json:"max_event_bytes"`
	Cases         []ingestVector `json:"cases"`
}

type ingestVector struct {
	Name        string      `json:"name"`
	Headers     [][2]string `json:"headers"`
	Value       *string     `json:"value"`
	ValueRepeat *struct {
		Char  string `json:"char"`
		Count int    `json:"count"`
	} `json:"value_repeat"`
	Expect      Kind   `json:"expect"`
	Reason      Reason `json:"reason"`
	EventKey    string `json:"event_key"`
	SchemaMajor int    `json:"schema_major"`
}

func (c ingestVector) record() ([]Header, []byte) {
	headers := make([]Header, len(c.Headers))
	for i, h := range c.Headers {
		headers[i] = Header{Key: h[0], Value: []byte(h[1])}
	}
	switch {
	case c.ValueRepeat != nil:
		return headers, []byte(strings.Repeat(c.ValueRepeat.Char, c.ValueRepeat.Count))
	case c.Value != nil:
		return headers, []byte(*c.Value)
	default:
		return headers, nil
	}
}

func loadIngestVectors(t testing.TB) ingestVectors {
	t.Helper()
	path, err := conformance.Path("ingest-verdicts.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var vectors ingestVectors
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(vectors.Cases) == 0 {
		t.Fatalf("%s holds no cases", path)
	}
	return vectors
}

// lookups models the state the vectors describe: the roster and the events
// already in the inbox.
func (v ingestVectors) lookups(t testing.TB) (RosterLookup, InboxLookup) {
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
	vectors := loadIngestVectors(t)
	roster, inbox := vectors.lookups(t)
	// The about text fixes the prefix; the maximum is a field of the file.
	opts := Options{TypePrefix: "studio.lerian.", MaxEventBytes: vectors.MaxEventBytes}

	names := make(map[string]bool, len(vectors.Cases))
	for _, c := range vectors.Cases {
		if names[c.Name] {
			t.Fatalf("case name %q is not unique", c.Name)
		}
		names[c.Name] = true

		t.Run(c.Name, func(t *testing.T) {
			headers, value := c.record()
			ev, v := Decide(headers, value, opts, roster, inbox)
			if v.Kind != c.Expect || v.Reason != c.Reason {
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
