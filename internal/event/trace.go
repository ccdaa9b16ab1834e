package event

// Plain W3C Trace Context headers. OpenTelemetry's Kafka instrumentation and
// any W3C propagator write a bare "traceparent" (and "tracestate") record
// header; when the record carries no CloudEvents traceparent attribute, that
// header is the event's trace context. It is not an attribute, so a malformed
// one is ignored rather than a reason to quarantine the record.

// maxTraceStateBytes is W3C Trace Context's limit a propagator must accept:
// 32 list members of up to 256 bytes would be more, but 512 is what the
// specification asks vendors to keep, and longer values are routinely cut.
const maxTraceStateBytes = 512

// plainTrace is the first plain traceparent and tracestate header of a
// record, as bytes (nil when absent).
type plainTrace struct {
	parent, state []byte
	seenParent    bool
	seenState     bool
}

// note records a plain header if it is one of the two trace headers; only
// the first of each counts, as a W3C propagator reads them.
func (t *plainTrace) note(h Header) {
	switch {
	case !t.seenParent && equalFoldASCII(h.Key, "traceparent"):
		t.parent, t.seenParent = h.Value, true
	case !t.seenState && equalFoldASCII(h.Key, "tracestate"):
		t.state, t.seenState = h.Value, true
	}
}

// apply makes the plain headers the event's trace context when no
// CloudEvents attribute gave it one. The tracestate belongs to its
// traceparent: a plain tracestate never joins a CloudEvents traceparent, and
// it is dropped when malformed while a valid traceparent is kept.
func (t *plainTrace) apply(ev *Event) {
	if ev.TraceParent != "" || !ValidTraceParent(string(t.parent)) {
		return
	}
	ev.TraceParent = string(t.parent)
	ev.TraceState = ""
	if validTraceState(string(t.state)) {
		ev.TraceState = string(t.state)
	}
}

// ValidTraceParent reports whether s is a W3C traceparent header value this
// hub can propagate: version 00 exactly "00-<32 hex>-<16 hex>-<2 hex>"; a
// later version at least that, with a '-' after the flags when longer
// (future versions may append fields); version ff is invalid; the trace id
// and parent id must not be all zeros. Hex digits are lowercase.
func ValidTraceParent(s string) bool {
	const size = 55 // 2 + 1 + 32 + 1 + 16 + 1 + 2
	if len(s) < size || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return false
	}
	version := s[0:2]
	if !isLowerHex(version) || version == "ff" {
		return false
	}
	if version == "00" && len(s) != size {
		return false
	}
	if len(s) > size && s[size] != '-' {
		return false
	}
	traceID, parentID, flags := s[3:35], s[36:52], s[53:55]
	return isLowerHex(traceID) && !allZeros(traceID) &&
		isLowerHex(parentID) && !allZeros(parentID) && isLowerHex(flags)
}

// validTraceState accepts what a header may carry on to the destination: a
// non-empty CloudEvents string within the W3C length limit. Its list
// members are the destination's business, not the hub's.
func validTraceState(s string) bool {
	return s != "" && len(s) <= maxTraceStateBytes && isCEString(s)
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func allZeros(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}
