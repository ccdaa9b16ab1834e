package events

import (
	"math"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/event"
)

// TestHeaderAndOmitMakeRecordsIngestQuarantines builds records that are
// malformed on purpose and checks that the hub's own parser quarantines
// them for the reason intended.
func TestHeaderAndOmitMakeRecordsIngestQuarantines(t *testing.T) {
	base := produceInput{Tenant: "acme", Type: "transaction.posted", Source: "midaz", SchemaVersion: "1.0.0",
		ContentType: "application/json", Data: []byte(`{}`)}
	for _, tc := range []struct {
		name    string
		headers []kgo.RecordHeader
		omit    []string
		want    event.Reason
	}{
		{"omit the tenant", nil, []string{"tenantid"}, event.ReasonMissingTenantID},
		{"omit by header name", nil, []string{"CE-Time"}, event.ReasonMissingTime},
		{"a second, different id", []kgo.RecordHeader{{Key: "ce-id", Value: []byte("other")}}, nil, event.ReasonDuplicateAttribute},
		{"replace the id with junk", []kgo.RecordHeader{{Key: "ce-id", Value: []byte("not-a-uuid")}}, []string{"id"}, event.ReasonInvalidID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base
			in.Headers, in.Omit = tc.headers, tc.omit
			tmpl, err := newTemplate(in, "")
			if err != nil {
				t.Fatalf("newTemplate: %v (a malformed record on purpose must be allowed)", err)
			}
			rec := tmpl.record(sampleID, time.Unix(1767225600, 0))
			headers := make([]event.Header, len(rec.Headers))
			for i, h := range rec.Headers {
				headers[i] = event.Header(h)
			}
			_, verdict, ok := event.Parse(headers, rec.Value, event.Options{TypePrefix: event.DefaultTypePrefix, MaxEventBytes: math.MaxInt})
			if ok || verdict.Kind != event.Quarantine || verdict.Reason != tc.want {
				t.Errorf("verdict %v, want quarantine %s", verdict, tc.want)
			}
		})
	}
	// Without either flag the tool still refuses what ingest would refuse.
	bad := base
	bad.Subject = "a\x00b"
	if _, err := newTemplate(bad, ""); err == nil {
		t.Error("a malformed subject without --header/--omit was accepted")
	}
}
