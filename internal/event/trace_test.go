package event

import "testing"

const (
	producerParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ceParent       = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
)

// TestPlainTraceContext pins which trace context an accepted event carries
// when plain W3C headers and CloudEvents attributes meet.
func TestPlainTraceContext(t *testing.T) {
	cases := []struct {
		name             string
		headers          []Header
		wantParent       string
		wantState        string
		wantOtherHeaders int
	}{
		{"plain traceparent alone", add(validRecord(), "traceparent", producerParent),
			producerParent, "", 1},
		{"plain traceparent and tracestate", add(validRecord(), "traceparent", producerParent, "tracestate", "rojo=00f067aa0ba902b7"),
			producerParent, "rojo=00f067aa0ba902b7", 2},
		{"header names fold case", add(validRecord(), "Traceparent", producerParent, "TraceState", "k=v"),
			producerParent, "k=v", 2},
		{"first plain header counts", add(validRecord(), "traceparent", producerParent, "traceparent", ceParent),
			producerParent, "", 2},
		{"CloudEvents attribute wins", add(validRecord(), "ce-traceparent", ceParent, "traceparent", producerParent, "tracestate", "plain=1"),
			ceParent, "", 2},
		{"CloudEvents attribute and state win", add(validRecord(), "ce_traceparent", ceParent, "ce_tracestate", "ce=1", "traceparent", producerParent, "tracestate", "plain=1"),
			ceParent, "ce=1", 2},
		{"malformed plain traceparent ignored", add(validRecord(), "traceparent", "not-a-traceparent", "tracestate", "k=v"),
			"", "", 2},
		{"uppercase hex ignored", add(validRecord(), "traceparent", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01"),
			"", "", 1},
		{"malformed tracestate dropped, traceparent kept", add(validRecord(), "traceparent", producerParent, "tracestate", "bad\x01state"),
			producerParent, "", 2},
		{"plain tracestate without traceparent ignored", add(validRecord(), "tracestate", "k=v"),
			"", "", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev, v, ok := Parse(c.headers, []byte(`{}`), Options{})
			if !ok {
				t.Fatalf("rejected: %s", v)
			}
			if ev.TraceParent != c.wantParent || ev.TraceState != c.wantState {
				t.Errorf("trace context (%q, %q), want (%q, %q)", ev.TraceParent, ev.TraceState, c.wantParent, c.wantState)
			}
			if len(ev.OtherHeaders) != c.wantOtherHeaders {
				t.Errorf("%d other headers kept, want %d", len(ev.OtherHeaders), c.wantOtherHeaders)
			}
		})
	}
}

func TestValidTraceParent(t *testing.T) {
	cases := map[string]bool{
		producerParent: true,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00":        true,
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01":        true,
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future": true,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-":       false, // version 00 has no more fields
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x":       false,
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01":        false,
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01":        false,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01":        false,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7":           false,
		"00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01":        false,
		"0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01":        false,
		"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01":        false,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0z":        false,
		"": false,
	}
	for s, want := range cases {
		if got := ValidTraceParent(s); got != want {
			t.Errorf("ValidTraceParent(%q) = %v, want %v", s, got, want)
		}
	}
}
