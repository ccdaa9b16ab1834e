package hubapi

import "time"

// EncodingBase64 marks a field whose bytes were not valid UTF-8 and are shown
// in standard base64 instead.
const EncodingBase64 = "base64"

// QuarantineItem is a poison record as the API and CLI show it: docs/api.md's
// quarantine item. Text that is valid UTF-8 is shown as it is, so operators
// can read the headers that got the record rejected; anything else is
// base64, flagged by an "encoding" beside it, so no byte is lost or altered.
type QuarantineItem struct {
	ID        int64  `json:"id"`
	Reason    string `json:"reason"`
	Detail    string `json:"detail"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	// Key is the record key; null when the record had none.
	Key *string `json:"key"`
	// Encoding is "base64" when Key is base64.
	Encoding    string             `json:"encoding,omitempty"`
	Headers     []QuarantineHeader `json:"headers"`
	ValueBase64 string             `json:"value_base64"`
	ReceivedAt  time.Time          `json:"received_at"`
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
}
