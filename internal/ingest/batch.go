package ingest

import (
	"crypto/sha256"
	"slices"
	"strconv"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/internal/store/queue"
)

// partitionRecords are the records one poll returned for one partition, in
// offset order.
type partitionRecords struct {
	topic     string
	topicID   uuid.UUID // of the incarnation fetched; uuid.Nil when the broker has none
	partition int32
	records   []*kgo.Record
}

// splitByPartition groups a poll's records per partition, keeping each
// partition's order and the order in which partitions first appear.
func splitByPartition(fetches kgo.Fetches) []partitionRecords {
	type tp struct {
		topic     string
		partition int32
	}
	index := make(map[tp]int)
	var out []partitionRecords
	for _, f := range fetches {
		for _, t := range f.Topics {
			for _, p := range t.Partitions {
				if len(p.Records) == 0 {
					continue
				}
				k := tp{t.Topic, p.Partition}
				i, ok := index[k]
				if !ok {
					i = len(out)
					index[k] = i
					out = append(out, partitionRecords{topic: t.Topic, topicID: uuid.UUID(t.TopicID), partition: p.Partition})
				}
				out[i].records = append(out[i].records, p.Records...)
			}
		}
	}
	return out
}

// decideBatch gives each record of a partition the verdict that needs no
// database: rules 1–4 (event.Parse) and the roster gate, rules 5–6
// (event.Admit). Rule 7, the duplicate check, is the batch write's.
func decideBatch(group string, p partitionRecords, opts event.Options, roster func(tenantID string) event.TenantStatus) queue.IngestBatch {
	// One backing array for every record's headers: kgo.RecordHeader and
	// event.Header have the same layout, so each converts in place.
	total := 0
	for _, r := range p.records {
		total += len(r.Headers)
	}
	headers := make([]event.Header, 0, total)

	batch := queue.IngestBatch{
		Group:     group,
		Topic:     p.topic,
		TopicID:   p.topicID,
		Partition: p.partition,
		Records:   make([]queue.IngestRecord, len(p.records)),
	}
	for i, r := range p.records {
		start := len(headers)
		for _, h := range r.Headers {
			headers = append(headers, event.Header(h))
		}
		rec := queue.IngestRecord{
			Offset:  r.Offset,
			Key:     r.Key,
			Headers: headers[start:len(headers):len(headers)],
			Value:   r.Value,
		}
		rec.Event, rec.Verdict = decideRecord(rec.Headers, rec.Value, opts, roster)
		if rec.Verdict.Kind == event.Quarantine {
			boundForQuarantine(&rec, opts)
		}
		batch.Records[i] = rec
	}
	if n := len(p.records); n > 0 {
		batch.NextOffset = p.records[n-1].Offset + 1
	}
	return batch
}

// decideRecord applies rules 1–6 to one record, in the order of docs/concepts.md, Verdicts.
func decideRecord(headers []event.Header, value []byte, opts event.Options, roster func(string) event.TenantStatus) (event.Event, event.Verdict) {
	ev, rejected, ok := event.Parse(headers, value, opts)
	if !ok {
		return event.Event{}, rejected
	}
	if v, admitted := event.Admit(roster(ev.TenantID)); !admitted {
		return ev, v
	}
	return ev, event.Accepted()
}

// doubtfulTenants lists, once each, the tenants whose records the roster
// gate turned away in batch. Those discards are final, and the cached
// roster may predate the tenant's creation or activation by a moment
// (until its change notification arrives), so they are asked of the
// database before the batch is stored.
func doubtfulTenants(batch queue.IngestBatch) []string {
	var ids []string
	for _, rec := range batch.Records {
		if r := rec.Verdict.Reason; r != event.ReasonUnknownTenant && r != event.ReasonInactiveTenant {
			continue
		}
		if !slices.Contains(ids, rec.Event.TenantID) {
			ids = append(ids, rec.Event.TenantID)
		}
	}
	return ids
}

// readmit applies the roster gate again, with the database's statuses, to
// the records it turned away; a tenant missing from statuses is unknown.
func readmit(batch *queue.IngestBatch, statuses map[string]event.TenantStatus) {
	for i := range batch.Records {
		rec := &batch.Records[i]
		if r := rec.Verdict.Reason; r != event.ReasonUnknownTenant && r != event.ReasonInactiveTenant {
			continue
		}
		if v, admitted := event.Admit(statuses[rec.Event.TenantID]); admitted {
			rec.Verdict = event.Accepted()
		} else {
			rec.Verdict = v
		}
	}
}

// quarantinePrefixBytes is how much of an oversize value, or key, a
// quarantined record keeps.
const quarantinePrefixBytes = 64 << 10

// boundForQuarantine cuts what a quarantined record stores to what is
// worth keeping and bounded: a producer decides how large a record is, and
// storing a 100 MB value in full would put the hostile input in the
// database and every read of it. A value within STREAMING_HUB_MAX_EVENT_BYTES
// is kept whole (the hub would have accepted that size, and a record
// refused for a header can be repaired and produced again from it); a
// larger one keeps its first quarantinePrefixBytes (never less than the
// limit allows), with the size and
// SHA-256 of the whole value to match it against the producer's copy.
// Headers beyond the header limits keep the first ones that fit, and a key
// over quarantinePrefixBytes its first bytes; the detail says what was cut.
func boundForQuarantine(rec *queue.IngestRecord, opts event.Options) {
	if len(rec.Value) > max(opts.MaxValueBytes(), quarantinePrefixBytes) {
		sum := sha256.Sum256(rec.Value)
		rec.Original = pg.ValueInfo{Size: int64(len(rec.Value)), SHA256: sum[:], Truncated: true}
		rec.Value = rec.Value[:quarantinePrefixBytes:quarantinePrefixBytes]
	}
	maxCount, maxBytes := opts.HeaderLimits()
	if kept, cut := fitHeaders(rec.Headers, maxCount, maxBytes); kept != len(rec.Headers) || cut {
		rec.Verdict.Detail += "; the first " + strconv.Itoa(kept) + " of " + strconv.Itoa(len(rec.Headers)) +
			" headers are kept (" + strconv.Itoa(maxBytes) + " bytes at most)"
		rec.Headers = cutHeaders(rec.Headers, kept, maxBytes)
	}
	if len(rec.Key) > quarantinePrefixBytes {
		rec.Verdict.Detail += "; the first " + strconv.Itoa(quarantinePrefixBytes) + " of the key's " +
			strconv.Itoa(len(rec.Key)) + " bytes are kept"
		rec.Key = rec.Key[:quarantinePrefixBytes:quarantinePrefixBytes]
	}
}

// fitHeaders counts the leading headers that fit within maxCount headers
// and maxBytes bytes, the last of them possibly cut (cut reports it).
func fitHeaders(headers []event.Header, maxCount, maxBytes int) (kept int, cut bool) {
	room := maxBytes
	for _, h := range headers {
		if kept == maxCount || room <= len(h.Key) {
			return kept, false
		}
		size := len(h.Key) + len(h.Value)
		if size > room {
			return kept + 1, true
		}
		room -= size
		kept++
	}
	return kept, false
}

// cutHeaders keeps the first kept headers, cutting the last one's value to
// what maxBytes leaves room for.
func cutHeaders(headers []event.Header, kept, maxBytes int) []event.Header {
	out := slices.Clone(headers[:kept])
	room := maxBytes
	for i := range out {
		if size := len(out[i].Key) + len(out[i].Value); size > room {
			out[i].Value = out[i].Value[:room-len(out[i].Key)]
		}
		room -= len(out[i].Key) + len(out[i].Value)
	}
	return out
}
