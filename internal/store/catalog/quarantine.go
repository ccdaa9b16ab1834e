package catalog

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// QuarantinedRecord is a poison record exactly as ingest stored it: the raw
// bytes of its key, headers and value, for forensics.
type QuarantinedRecord struct {
	QuarantineOrigin
	// Key is nil when the record had no key (as opposed to an empty one).
	Key        []byte
	Headers    []RawHeader
	Value      []byte
	ReceivedAt time.Time
}

// QuarantineOrigin is why a record was quarantined and where it was read.
type QuarantineOrigin struct {
	ID        int64
	Reason    string
	Detail    string
	Topic     string
	Partition int32
	Offset    int64
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

// What a listing shows of each quarantined record, whatever it held: the
// database cuts every field before it is sent, so neither the hub's memory
// nor a response grows with what producers put in quarantine.
const (
	// SummaryHeaders is how many of a record's headers a listing shows.
	SummaryHeaders = 16
	// SummaryFieldBytes bounds the key and each header name and value a
	// listing shows.
	SummaryFieldBytes = 128
	// SummaryValueBytes bounds the value prefix a listing shows.
	SummaryValueBytes = 64
	// summaryDetailBytes bounds the detail; ingest writes details of a
	// few hundred bytes, rows written by other hands may hold more.
	summaryDetailBytes = 1024
)

// QuarantineSummary is a quarantined record as a listing shows it.
type QuarantineSummary struct {
	QuarantineOrigin
	// KeyPrefix is nil when the record had no key.
	KeyPrefix []byte
	KeySize   int64
	// Headers are the first SummaryHeaders headers, each name and value
	// cut to SummaryFieldBytes; HeaderValueSizes and HeaderKeySizes are
	// their sizes before the cut.
	Headers          []RawHeader
	HeaderKeySizes   []int64
	HeaderValueSizes []int64
	HeaderCount      int
	ValuePrefix      []byte
	Value            pg.ValueInfo
	ReceivedAt       time.Time
}

// ListQuarantine returns a page of quarantined records as summaries, newest
// first, and whether older records follow it. GetQuarantined reads one whole.
func (s *Store) ListQuarantine(ctx context.Context, q QuarantineQuery) (records []QuarantineSummary, more bool, err error) {
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
	// NULL-tolerant parameters rather than assembled SQL.
	rows, err := s.Pool.Query(ctx, listQuarantineSQL,
		pgx.NamedArgs{
			"detail_chars": summaryDetailBytes, "field_bytes": SummaryFieldBytes, "headers": SummaryHeaders,
			"value_bytes": SummaryValueBytes, "after_at": afterAt, "after_id": afterID,
			"reason": q.Reason, "topic": q.Topic, "limit": q.Limit + 1,
		})
	if err != nil {
		return nil, false, pg.Classify(fmt.Errorf("list quarantine: %w", err))
	}
	records, err = pgx.CollectRows(rows, scanQuarantineSummary)
	if err != nil {
		return nil, false, pg.Classify(fmt.Errorf("list quarantine: %w", err))
	}
	if len(records) > q.Limit {
		return records[:q.Limit], true, nil
	}
	return records, false, nil
}

func scanQuarantineSummary(row pgx.CollectableRow) (QuarantineSummary, error) {
	var r QuarantineSummary
	var keys, values [][]byte
	err := row.Scan(&r.ID, &r.Reason, &r.Detail, &r.Topic, &r.Partition, &r.Offset,
		&r.KeyPrefix, &r.KeySize, &r.HeaderCount, &keys, &r.HeaderKeySizes, &values, &r.HeaderValueSizes,
		&r.ValuePrefix, &r.Value.Size, &r.Value.SHA256, &r.Value.Truncated, &r.ReceivedAt)
	if err != nil {
		return QuarantineSummary{}, err
	}
	r.Headers = pairHeaders(keys, values)
	for len(r.HeaderKeySizes) < len(r.Headers) {
		r.HeaderKeySizes = append(r.HeaderKeySizes, 0)
	}
	for len(r.HeaderValueSizes) < len(r.Headers) {
		r.HeaderValueSizes = append(r.HeaderValueSizes, 0)
	}
	return r, nil
}

// GetQuarantined returns one quarantined record whole; pg.ErrNotFound when no
// record has that id.
func (s *Store) GetQuarantined(ctx context.Context, id int64) (QuarantinedRecord, pg.ValueInfo, error) {
	var r QuarantinedRecord
	var v pg.ValueInfo
	var keys, values [][]byte
	err := s.Pool.QueryRow(ctx, getQuarantinedSQL, pgx.StrictNamedArgs{"id": id}).
		Scan(&r.ID, &r.Reason, &r.Detail, &r.Topic, &r.Partition, &r.Offset,
			&r.Key, &keys, &values, &r.Value, &r.ReceivedAt, &v.Size, &v.SHA256, &v.Truncated)
	if errors.Is(err, pgx.ErrNoRows) {
		return QuarantinedRecord{}, pg.ValueInfo{}, fmt.Errorf("%w: quarantined record %d", pg.ErrNotFound, id)
	}
	if err != nil {
		return QuarantinedRecord{}, pg.ValueInfo{}, pg.Classify(fmt.Errorf("get quarantined record %d: %w", id, err))
	}
	r.Headers = pairHeaders(keys, values)
	return r, v, nil
}

// pairHeaders zips the stored name and value arrays. Ingest writes them
// together; should a row written by other hands pair them unevenly, every
// stored byte is still shown, the missing side as nil.
func pairHeaders(keys, values [][]byte) []RawHeader {
	headers := make([]RawHeader, max(len(keys), len(values)))
	for i := range headers {
		if i < len(keys) {
			headers[i].Key = keys[i]
		}
		if i < len(values) {
			headers[i].Value = values[i]
		}
	}
	return headers
}

//go:embed sql/list_quarantine.sql
var listQuarantineSQL string

//go:embed sql/get_quarantined.sql
var getQuarantinedSQL string
