package hubapi

import (
	"encoding/json"
	"time"
)

// PullPage is the answer of GET /v1/events (docs/consuming.md, Pulling events): a pull subscription's
// events after its cursor (or after `after`), in seq order. NextCursor is
// the largest seq returned, or nil when the page is short (fewer items than
// the limit), which means the subscription has nothing more right now.
//
// Unlike the opaque string cursors of the listings, NextCursor is a seq: it
// is what `after` takes, and what the durable cursor holds.
type PullPage struct {
	Items      []PullEvent `json:"items"`
	NextCursor *int64      `json:"next_cursor"`
	// EventsExpired says the read started behind retention: events after
	// its starting point were removed before they were read, and the page
	// begins at the oldest retained one. Nothing is skipped silently.
	EventsExpired bool `json:"events_expired,omitempty"`
}

// PullEvent is one event of a pull subscription, with the field names of
// docs/consuming.md, Pulling events.
type PullEvent struct {
	// Seq is the event's arrival number in the hub: strictly increasing,
	// and the order of the stream.
	Seq int64 `json:"seq"`
	// CEID is the CloudEvents id, stable across redeliveries: the key to
	// deduplicate on.
	CEID string `json:"ceId"`
	// Type is the event key <resourcetype>.<eventtype>; CEType is the full
	// CloudEvents type.
	Type          string    `json:"type"`
	CEType        string    `json:"ceType"`
	Source        string    `json:"source"`
	TenantID      string    `json:"tenantId"`
	SchemaVersion string    `json:"schemaVersion"`
	Subject       string    `json:"subject,omitempty"`
	Time          time.Time `json:"time"`
	ReceivedAt    time.Time `json:"receivedAt"`
	// DataContentType is the event's datacontenttype, "" when it had none.
	DataContentType string `json:"dataContentType,omitempty"`
	// Payload is the event data: the JSON itself when the content type is
	// JSON (or absent) and the data is valid JSON, else a JSON string of
	// the data in standard base64, with PayloadEncoding "base64".
	Payload         json.RawMessage `json:"payload"`
	PayloadEncoding string          `json:"payloadEncoding,omitempty"`
}
