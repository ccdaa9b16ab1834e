package hubapi

import (
	"encoding/json"
	"time"
)

// InboxEvent is one event as the hub stored it: an item of GET /v1/inbox,
// and the head of GET /v1/inbox/{id}. Headers and Payload are shown only
// when one event is read.
type InboxEvent struct {
	// ID is the CloudEvents id (X-Lerian-Event-Id).
	ID string `json:"id"`
	// Seq is the event's arrival number in the hub.
	Seq int64 `json:"seq"`
	// Type is the event key <resourcetype>.<eventtype>; CEType is the full
	// CloudEvents type.
	Type            string    `json:"type"`
	CEType          string    `json:"ce_type"`
	Source          string    `json:"source"`
	Subject         string    `json:"subject,omitempty"`
	TenantID        string    `json:"tenant_id"`
	SchemaVersion   string    `json:"schema_version"`
	DataContentType string    `json:"datacontenttype,omitempty"`
	DataSchema      string    `json:"dataschema,omitempty"`
	TraceParent     string    `json:"traceparent,omitempty"`
	TraceState      string    `json:"tracestate,omitempty"`
	Time            time.Time `json:"time"`
	ReceivedAt      time.Time `json:"received_at"`
	Topic           string    `json:"topic"`
	Partition       int32     `json:"partition"`
	Offset          int64     `json:"offset"`
	// SizeBytes is the payload's size.
	SizeBytes int `json:"size_bytes"`
	// Headers are the Kafka record's headers, as quarantine items show them.
	Headers []QuarantineHeader `json:"headers,omitempty"`
	// Payload is the event data as pull items carry it: the JSON itself
	// when it is JSON, else base64 with PayloadEncoding "base64".
	Payload         json.RawMessage `json:"payload,omitempty"`
	PayloadEncoding string          `json:"payload_encoding,omitempty"`
}

// EventDetail is GET /v1/inbox/{id}: the stored event and what became of it
// for every subscription that matched it.
type EventDetail struct {
	InboxEvent
	Deliveries []EventDelivery `json:"deliveries"`
}

// EventDelivery is the fate of one event for one subscription. Push
// subscriptions have Delivery, with every attempt; pull subscriptions have
// Pulled, whether their cursor has passed the event.
type EventDelivery struct {
	SubscriptionID   string          `json:"subscription_id"`
	SubscriptionName string          `json:"subscription_name"`
	SinkType         string          `json:"sink_type"`
	Delivery         *DeliveryDetail `json:"delivery,omitempty"`
	Pulled           *bool           `json:"pulled,omitempty"`
}
