package hubapi

import "time"

// EncodingBase64 marks a field whose bytes were not valid UTF-8 and are shown
// in standard base64 instead.
const EncodingBase64 = "base64"

// QuarantineItem is one poison record whole, as GET /admin/quarantine/{id}
// and `hubctl quarantine get` show it: the quarantine list's item plus the
// value's size and hash. Text that is valid UTF-8 is
// shown as it is, so operators can read the headers that got the record
// rejected; anything else is base64, flagged by an "encoding" beside it, so
// no byte is lost or altered.
type QuarantineItem struct {
	QuarantineOrigin
	// Key is the record key; null when the record had none.
	Key *string `json:"key"`
	// Encoding is "base64" when Key is base64.
	Encoding string             `json:"encoding,omitempty"`
	Headers  []QuarantineHeader `json:"headers"`
	// ValueBase64 is the value as stored: the whole value, or its first
	// bytes when ValueTruncated.
	ValueBase64 string `json:"value_base64"`
	QuarantineValue
	ReceivedAt time.Time `json:"received_at"`
}

// QuarantineOrigin is why a record was quarantined and where it was read.
type QuarantineOrigin struct {
	ID        int64  `json:"id"`
	Reason    string `json:"reason"`
	Detail    string `json:"detail"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

// QuarantineValue describes the value a producer sent, also when only its
// first bytes were kept.
type QuarantineValue struct {
	// ValueSize is the size of the value the producer sent, in bytes.
	ValueSize int64 `json:"value_size"`
	// ValueSHA256 is the hex SHA-256 of the whole value the producer sent,
	// to match it against the producer's copy.
	ValueSHA256 string `json:"value_sha256"`
	// ValueTruncated is true when the hub kept only the value's first
	// bytes: it was larger than STREAMING_HUB_MAX_EVENT_BYTES.
	ValueTruncated bool `json:"value_truncated"`
}

// QuarantineSummary is a poison record as GET /admin/quarantine and
// `hubctl quarantine list` show it: bounded in size whatever the record
// held, so that a listing stays small however large the records
// quarantined. The key, the first headers and the value are cut to their
// first bytes; the whole record is QuarantineItem.
type QuarantineSummary struct {
	QuarantineOrigin
	// Key is the record key's first bytes; null when the record had none.
	Key *string `json:"key"`
	// Encoding is "base64" when Key is base64.
	Encoding string `json:"encoding,omitempty"`
	// KeySize is the stored key's size in bytes.
	KeySize int64 `json:"key_size"`
	// Headers are the record's first headers, each name and value cut to
	// its first bytes (Truncated then says so).
	Headers []QuarantineHeader `json:"headers"`
	// HeaderCount is how many headers are stored.
	HeaderCount int `json:"header_count"`
	// ValuePrefixBase64 is the value's first bytes.
	ValuePrefixBase64 string `json:"value_prefix_base64"`
	QuarantineValue
	ReceivedAt time.Time `json:"received_at"`
}

// QuarantineHeader is one record header of a quarantine item.
type QuarantineHeader struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// Encoding is "base64" when Value is base64.
	Encoding string `json:"encoding,omitempty"`
	// KeyEncoding is "base64" when Key is base64. Kafka header names are
	// meant to be text, but a poison record is exactly where they may not be.
	KeyEncoding string `json:"key_encoding,omitempty"`
	// Truncated is true, in a QuarantineSummary, when the name or the value
	// is cut to its first bytes.
	Truncated bool `json:"truncated,omitempty"`
}
