package event

import (
	"strings"
	"time"
)

// Stored is an event's attributes as the inbox keeps them in columns.
//
// A binary-mode record carries its attributes twice: parsed into those
// columns, and in the headers the inbox also keeps byte for byte. The
// header values are about a tenth of a 1 KiB event's row, every byte of
// which ingest writes to the WAL, so a header whose value the columns
// determine is kept as a reference to them rather than a copy
// (DerivedHeaders), and put back when the event is read (RestoreHeaders).
// Only an exact match is a reference: a header the columns would render
// differently (an id in capitals, a time with nanoseconds) stays a copy.
type Stored struct {
	ID              string
	Source          string
	Type            string
	SchemaVersion   string
	Key             string // <resourcetype>.<eventtype>
	TenantID        string
	Subject         string
	DataContentType string
	DataSchema      string
	TraceParent     string
	TraceState      string
	Time            time.Time
}

// Stored is e's attributes as the inbox reads them back: its time as
// PostgreSQL keeps a timestamptz, to the microsecond.
func (e *Event) Stored() Stored {
	return Stored{
		ID: e.ID, Source: e.Source, Type: e.Type, SchemaVersion: e.SchemaVersion, Key: e.Key, TenantID: e.TenantID,
		Subject: e.Subject, DataContentType: e.DataContentType, DataSchema: e.DataSchema,
		TraceParent: e.TraceParent, TraceState: e.TraceState, Time: e.Time.Truncate(time.Microsecond),
	}
}

// HeaderValue is the value a header named name holds when it carries what
// the columns hold, and whether any column determines it: the CloudEvents
// attributes (ce- or ce_ prefix, any case), content-type, and the plain
// traceparent and tracestate headers.
func (s Stored) HeaderValue(name string) (string, bool) {
	switch {
	case equalFoldASCII(name, "content-type"):
		return s.DataContentType, s.DataContentType != ""
	case equalFoldASCII(name, "traceparent"):
		return s.TraceParent, s.TraceParent != ""
	case equalFoldASCII(name, "tracestate"):
		return s.TraceState, s.TraceState != ""
	}
	kind, a, _ := classifyHeader(name)
	if kind != headerAttribute {
		return "", false
	}
	resourceType, eventType, _ := strings.Cut(s.Key, ".")
	var v string
	switch a {
	case attrSpecVersion:
		v = specVersion
	case attrID:
		v = s.ID
	case attrSource:
		v = s.Source
	case attrType:
		v = s.Type
	case attrTime:
		if s.Time.IsZero() {
			return "", false
		}
		v = s.Time.UTC().Format(time.RFC3339Nano)
	case attrSchemaVersion:
		v = s.SchemaVersion
	case attrResourceType:
		v = resourceType
	case attrEventType:
		v = eventType
	case attrTenantID:
		v = s.TenantID
	case attrSubject:
		v = s.Subject
	case attrDataContentType:
		v = s.DataContentType
	case attrDataSchema:
		v = s.DataSchema
	case attrTraceParent:
		v = s.TraceParent
	case attrTraceState:
		v = s.TraceState
	default: // systemevent: a system event is never stored
		return "", false
	}
	return v, v != ""
}

// MaxDerivedHeaders is how many leading headers can be references: the
// mask is one bigint column.
const MaxDerivedHeaders = 64

// DerivedHeaders is the mask of headers whose value s determines exactly:
// bit i for headers[i], among the first MaxDerivedHeaders.
func DerivedHeaders(s Stored, headers []Header) uint64 {
	var mask uint64
	for i, h := range headers[:min(len(headers), MaxDerivedHeaders)] {
		if h.Value == nil {
			continue // a null value is kept as NULL, and means null
		}
		if v, ok := s.HeaderValue(h.Key); ok && v == string(h.Value) {
			mask |= 1 << i
		}
	}
	return mask
}

// RestoreHeader is the value of the header at index i named name, whose
// stored value is stored, given the mask DerivedHeaders made: the columns'
// value where the bit is set, else stored as it is.
func RestoreHeader(s Stored, mask uint64, i int, name string, stored []byte) []byte {
	if i >= MaxDerivedHeaders || mask&(1<<i) == 0 {
		return stored
	}
	v, _ := s.HeaderValue(name)
	return []byte(v)
}
