package event

import "time"

const (
	// DefaultTypePrefix is STREAMING_HUB_TYPE_PREFIX's default.
	DefaultTypePrefix = "studio.lerian."
	// DefaultMaxEventBytes is STREAMING_HUB_MAX_EVENT_BYTES's default (1 MiB).
	DefaultMaxEventBytes = 1 << 20
)

// Header is one record header. Its layout matches franz-go's
// kgo.RecordHeader, so ingest converts each header with a plain type
// conversion, without copying names or values.
type Header struct {
	Key   string
	Value []byte
}

// Options are the deployment's settings the record rules depend on. The zero
// value of each field selects its default.
type Options struct {
	// TypePrefix every type must start with; "" means DefaultTypePrefix.
	TypePrefix string
	// MaxEventBytes is the largest accepted value; ≤ 0 means DefaultMaxEventBytes.
	MaxEventBytes int
	// MaxHeaderCount, MaxHeaderBytes and MaxAttributeBytes bound the
	// headers (rule 0); ≤ 0 selects each one's default.
	MaxHeaderCount    int
	MaxHeaderBytes    int
	MaxAttributeBytes int
}

func (o Options) typePrefix() string {
	if o.TypePrefix == "" {
		return DefaultTypePrefix
	}
	return o.TypePrefix
}

func (o Options) maxEventBytes() int { return positiveOr(o.MaxEventBytes, DefaultMaxEventBytes) }

// Event is a record that passed the record-local rules (1–4). Optional
// attributes are "" when absent: CloudEvents requires them to be non-empty
// when present, so empty and absent mean the same.
//
// The string attributes share one allocation, and Data and OtherHeaders alias
// the record they were parsed from: neither is copied on the ingest path.
type Event struct {
	ID          string // canonical UUIDv7, lowercase
	Source      string
	Type        string // full CloudEvents type, e.g. studio.lerian.midaz.transaction.posted
	SpecVersion string // always "1.0"

	Time     time.Time // parsed time, in UTC
	TimeText string    // time exactly as the producer sent it

	SchemaVersion string // as sent, e.g. "1.0.0"
	SchemaMajor   int    // first number of SchemaVersion

	ResourceType string
	EventType    string
	Key          string // the event key <resourcetype>.<eventtype>, e.g. transaction.posted

	TenantID string

	Subject         string
	DataContentType string // from ce-datacontenttype or the content-type header
	DataSchema      string
	// TraceParent and TraceState are the event's W3C trace context: the
	// CloudEvents attributes, or else a valid plain traceparent header
	// (and its tracestate) as OpenTelemetry's Kafka instrumentation
	// writes them.
	TraceParent string
	TraceState  string

	// Data is the record value, the event data byte for byte.
	Data []byte
	// OtherHeaders are the record's headers that carry no attribute of
	// SPEC §1.1 (plain headers such as a bare traceparent, and CloudEvents
	// extension attributes), in record order. They are kept, never read.
	OtherHeaders []Header
}
