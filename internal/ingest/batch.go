package ingest

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/store"
)

// partitionRecords are the records one poll returned for one partition, in
// offset order.
type partitionRecords struct {
	topic     string
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
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) == 0 {
			return
		}
		k := tp{p.Topic, p.Partition}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, partitionRecords{topic: p.Topic, partition: p.Partition})
		}
		out[i].records = append(out[i].records, p.Records...)
	})
	return out
}

// decideBatch gives each record of a partition the verdict that needs no
// database: rules 1–4 (event.Parse) and the roster gate, rules 5–6
// (event.Admit). Rule 7, the duplicate check, is the batch write's.
func decideBatch(group string, p partitionRecords, opts event.Options, roster func(tenantID string) event.TenantStatus) store.IngestBatch {
	// One backing array for every record's headers: kgo.RecordHeader and
	// event.Header have the same layout, so each converts in place.
	total := 0
	for _, r := range p.records {
		total += len(r.Headers)
	}
	headers := make([]event.Header, 0, total)

	batch := store.IngestBatch{
		Group:     group,
		Topic:     p.topic,
		Partition: p.partition,
		Records:   make([]store.IngestRecord, len(p.records)),
	}
	for i, r := range p.records {
		start := len(headers)
		for _, h := range r.Headers {
			headers = append(headers, event.Header(h))
		}
		rec := store.IngestRecord{
			Offset:  r.Offset,
			Key:     r.Key,
			Headers: headers[start:len(headers):len(headers)],
			Value:   r.Value,
		}
		rec.Event, rec.Verdict = decideRecord(rec.Headers, rec.Value, opts, roster)
		batch.Records[i] = rec
	}
	if n := len(p.records); n > 0 {
		batch.NextOffset = p.records[n-1].Offset + 1
	}
	return batch
}

// decideRecord applies rules 1–6 to one record, in the order docs/concepts.md, Verdicts gives.
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
