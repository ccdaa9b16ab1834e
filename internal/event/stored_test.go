package event

import (
	"testing"
	"time"
)

func TestStoredHeaderValue(t *testing.T) {
	s := Stored{
		ID: "01a248be-ef1e-7516-a2e7-ca2f601bb599", Source: "midaz", Type: "studio.lerian.midaz.transaction.posted",
		SchemaVersion: "1.0.0", Key: "transaction.posted", TenantID: "acme", Subject: "tx-1",
		DataContentType: "application/json", TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		Time: time.Date(2026, 12, 6, 0, 26, 42, 334333000, time.UTC),
	}
	tests := []struct {
		name   string
		want   string
		wantOK bool
	}{
		{"ce-specversion", "1.0", true},
		{"ce_id", s.ID, true},
		{"CE-ID", s.ID, true},
		{"ce-source", "midaz", true},
		{"ce_type", s.Type, true},
		{"ce-time", "2026-12-06T00:26:42.334333Z", true},
		{"ce-schemaversion", "1.0.0", true},
		{"ce-resourcetype", "transaction", true},
		{"ce-eventtype", "posted", true},
		{"ce-tenantid", "acme", true},
		{"ce-subject", "tx-1", true},
		{"ce-datacontenttype", "application/json", true},
		{"Content-Type", "application/json", true},
		{"traceparent", s.TraceParent, true},
		{"ce-traceparent", s.TraceParent, true},
		{"tracestate", "", false}, // empty column: nothing to refer to
		{"ce-dataschema", "", false},
		{"ce-systemevent", "", false},
		{"ce-myextension", "", false},
		{"x-request-id", "", false},
		{"ce", "", false},
	}
	for _, tt := range tests {
		got, ok := s.HeaderValue(tt.name)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("HeaderValue(%q) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}

// Whatever the headers, storing the derived ones as references and
// restoring them gives back every header byte for byte.
func TestDerivedHeadersRestoreExactly(t *testing.T) {
	ev := Event{
		ID: "01a248be-ef1e-7516-a2e7-ca2f601bb599", Source: "midaz", Type: "studio.lerian.midaz.bench.delivered",
		SchemaVersion: "1.0.0", Key: "bench.delivered", TenantID: "default", DataContentType: "application/json",
		Time: time.Date(2026, 12, 6, 0, 26, 42, 334333662, time.UTC),
	}
	headers := []Header{
		{"ce-specversion", []byte("1.0")},
		{"ce-id", []byte("01A248BE-EF1E-7516-A2E7-CA2F601BB599")}, // capitals: the column renders lowercase
		{"ce_id", []byte(ev.ID)},
		{"ce-source", []byte("midaz")},
		{"ce-type", []byte(ev.Type)},
		{"ce-time", []byte("2026-12-06T00:26:42.334333662Z")}, // nanoseconds: the column keeps microseconds
		{"ce-schemaversion", []byte("1.0.0")},
		{"ce-resourcetype", []byte("bench")},
		{"ce-eventtype", []byte("delivered")},
		{"ce-tenantid", []byte("default")},
		{"content-type", []byte("application/json")},
		{"ce-subject", []byte("")},     // empty: no column value to refer to
		{"x-null", nil},                // a null value stays null
		{"ce-source", []byte("other")}, // a repeat that differs
	}
	s := ev.Stored()
	mask := DerivedHeaders(s, headers)
	wantDerived := map[int]bool{0: true, 2: true, 3: true, 4: true, 6: true, 7: true, 8: true, 9: true, 10: true}
	for i, h := range headers {
		derived := mask&(1<<i) != 0
		if derived != wantDerived[i] {
			t.Errorf("header %d %s: derived %v, want %v", i, h.Key, derived, wantDerived[i])
		}
		stored := h.Value
		if derived {
			stored = nil
		}
		got := RestoreHeader(s, mask, i, h.Key, stored)
		if string(got) != string(h.Value) || (got == nil) != (h.Value == nil) {
			t.Errorf("header %d %s restored as %q, want %q", i, h.Key, got, h.Value)
		}
	}
}

func TestDerivedHeadersLookOnlyAtTheFirst64(t *testing.T) {
	s := Stored{Source: "midaz"}
	headers := make([]Header, 70)
	for i := range headers {
		headers[i] = Header{"ce-source", []byte("midaz")}
	}
	if mask := DerivedHeaders(s, headers); mask != ^uint64(0) {
		t.Fatalf("mask = %x, want all 64 bits", mask)
	}
	if got := RestoreHeader(s, ^uint64(0), 65, "ce-source", []byte("kept")); string(got) != "kept" {
		t.Fatalf("header 65 restored as %q, want its stored value", got)
	}
}
