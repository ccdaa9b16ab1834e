package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// QuarantinedRecord is a poison record exactly as ingest stored it: the raw
// bytes of its key, headers and value, for forensics.
type QuarantinedRecord struct {
	ID        int64
	Reason    string
	Detail    string
	Topic     string
	Partition int32
	Offset    int64
	// Key is nil when the record had no key (as opposed to an empty one).
	Key        []byte
	Headers    []RawHeader
	Value      []byte
	ReceivedAt time.Time
}

// RawHeader is one record header as bytes: Kafka puts no encoding on header
// names or values, and a poison record is kept without interpreting them.
type RawHeader struct {
	Key   []byte
	Value []byte
}

// QuarantinePosition is where a newest-first listing of the quarantine
// stands: the last record a page returned. Records sort by received_at, then
// id, both descending.
type QuarantinePosition struct {
	ReceivedAt time.Time
	ID         int64
}

// QuarantineQuery selects a page of the quarantine, newest first.
type QuarantineQuery struct {
	// Limit is the most records returned; at least 1.
	Limit int
	// After continues a listing past this record; nil starts with the newest.
	After *QuarantinePosition
	// Reason and Topic, when not empty, keep only records with exactly
	// that reason code or topic.
	Reason string
	Topic  string
}

// ListQuarantine returns a page of quarantined records, newest first, and
// whether older records follow it.
func (s *Store) ListQuarantine(ctx context.Context, q QuarantineQuery) (records []QuarantinedRecord, more bool, err error) {
	if q.Limit < 1 {
		return nil, false, fmt.Errorf("list quarantine: limit %d must be at least 1", q.Limit)
	}
	var afterAt *time.Time
	var afterID *int64
	if q.After != nil {
		afterAt, afterID = &q.After.ReceivedAt, &q.After.ID
	}
	// The row comparison follows the quarantine_newest index, so each page
	// is an index range scan however deep the listing goes. Filters are
	// NULL-tolerant parameters rather than assembled SQL: one plan, no
	// string building.
	rows, err := s.Pool.Query(ctx, `
		SELECT id, reason, detail, topic, kafka_partition, kafka_offset,
		       record_key, header_keys, header_values, value, received_at
		FROM quarantine
		WHERE ($1::timestamptz IS NULL OR (received_at, id) < ($1, $2::bigint))
		  AND ($3 = '' OR reason = $3)
		  AND ($4 = '' OR topic = $4)
		ORDER BY received_at DESC, id DESC
		LIMIT $5`,
		afterAt, afterID, q.Reason, q.Topic, q.Limit+1)
	if err != nil {
		return nil, false, classify(fmt.Errorf("list quarantine: %w", err))
	}
	records, err = pgx.CollectRows(rows, scanQuarantined)
	if err != nil {
		return nil, false, classify(fmt.Errorf("list quarantine: %w", err))
	}
	if len(records) > q.Limit {
		return records[:q.Limit], true, nil
	}
	return records, false, nil
}

func scanQuarantined(row pgx.CollectableRow) (QuarantinedRecord, error) {
	var r QuarantinedRecord
	var keys, values [][]byte
	err := row.Scan(&r.ID, &r.Reason, &r.Detail, &r.Topic, &r.Partition, &r.Offset,
		&r.Key, &keys, &values, &r.Value, &r.ReceivedAt)
	if err != nil {
		return QuarantinedRecord{}, err
	}
	// Ingest writes the two arrays together. Should a row written by other
	// hands pair them unevenly, every stored byte is still shown, the
	// missing side as nil, rather than dropping what cannot be paired.
	r.Headers = make([]RawHeader, max(len(keys), len(values)))
	for i := range r.Headers {
		if i < len(keys) {
			r.Headers[i].Key = keys[i]
		}
		if i < len(values) {
			r.Headers[i].Value = values[i]
		}
	}
	return r, nil
}
