package ingest

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// startSource says where a partition's consumption starts, for logs.
type startSource string

const (
	startAtKafka    startSource = "kafka"    // Kafka's committed offset (or the group's start) is current
	startAtStored   startSource = "database" // the stored offset is ahead of Kafka's: its Kafka commit was lost
	startAtLogStart startSource = "log-start"
)

// partitionStart is what is known about an assigned partition when deciding
// where to read it from.
type partitionStart struct {
	kafka     kgo.Offset // Kafka's committed offset, or the group's start offset when none
	stored    int64      // the database's next offset; -1 when none is stored
	logStart  int64      // the partition's first offset (only known when stored ≥ 0)
	logEnd    int64      // the partition's high watermark (only known when stored ≥ 0)
	hasBounds bool
}

// decideStart picks where to read a partition from. The database's offset is
// written in the same transaction as the records before it, so when it is
// ahead of Kafka's committed offset, the records between were stored and
// only their Kafka commit was lost: start at the stored offset (docs/concepts.md, Consume-once).
//
// A stored offset beyond the partition's end cannot come from this log: the
// topic was deleted and recreated (or the development broker started empty).
// The stored position is then void and reading starts at the log start; the
// caller rewrites the stored offset, otherwise the batch write would take the
// new records for ones already stored.
func decideStart(p partitionStart) (kgo.Offset, startSource) {
	if p.stored < 0 {
		return p.kafka, startAtKafka
	}
	if p.hasBounds && p.stored > p.logEnd {
		return kgo.NewOffset().At(p.logStart).WithEpoch(-1), startAtLogStart
	}
	// Kafka reports "no commit" as the group's start offset, a negative
	// sentinel, which every stored offset is ahead of.
	if committed := p.kafka.EpochOffset().Offset; committed >= p.stored {
		return p.kafka, startAtKafka
	}
	return kgo.NewOffset().At(p.stored).WithEpoch(-1), startAtStored
}

// adjustStartOffsets is franz-go's AdjustFetchOffsetsFn: it runs once the
// group has assigned partitions and their Kafka commits are fetched, before
// any of them is read. ctx ends when the group session starts revoking.
func (c *Consumer) adjustStartOffsets(ctx context.Context, offsets map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	<-c.clientSet
	assigned := make(map[string][]int32, len(offsets))
	for topic, parts := range offsets {
		for p := range parts {
			assigned[topic] = append(assigned[topic], p)
		}
	}
	var stored map[string]map[int32]int64
	err := c.retry(ctx, "load stored offsets", func(ctx context.Context) (err error) {
		stored, err = c.opts.Store.LoadOffsets(ctx, c.opts.Kafka.Group, assigned)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(stored) == 0 {
		return offsets, nil
	}

	withStored := make(map[string][]int32, len(stored))
	for topic, parts := range stored {
		for p := range parts {
			withStored[topic] = append(withStored[topic], p)
		}
	}
	var starts, ends map[string]map[int32]int64
	err = c.retry(ctx, "list partition bounds", func(ctx context.Context) (err error) {
		if starts, err = listOffsets(ctx, c.client, withStored, -2); err != nil {
			return err
		}
		ends, err = listOffsets(ctx, c.client, withStored, -1)
		return err
	})
	if err != nil {
		return nil, err
	}

	for topic, parts := range stored {
		for partition, next := range parts {
			start, hasStart := starts[topic][partition]
			end, hasEnd := ends[topic][partition]
			offset, source := decideStart(partitionStart{
				kafka:     offsets[topic][partition],
				stored:    next,
				logStart:  start,
				logEnd:    end,
				hasBounds: hasStart && hasEnd,
			})
			log := c.log.With(slog.String("topic", topic), slog.Int("partition", int(partition)),
				slog.Int64("stored_offset", next))
			switch source {
			case startAtStored:
				log.Info("resuming from the stored offset, ahead of Kafka's committed one",
					slog.Int64("kafka_offset", offsets[topic][partition].EpochOffset().Offset))
			case startAtLogStart:
				log.Warn("stored offset is beyond the end of the partition; the topic was recreated, reading it from the start",
					slog.Int64("log_start", start), slog.Int64("log_end", end))
				err := c.retry(ctx, "reset stored offset", func(ctx context.Context) error {
					return c.opts.Store.ResetOffset(ctx, c.opts.Kafka.Group, topic, partition, start)
				})
				if err != nil {
					return nil, err
				}
			}
			offsets[topic][partition] = offset
		}
	}
	return offsets, nil
}

// listOffsets asks the partition leaders for an offset per partition:
// timestamp -2 is the log start, -1 the high watermark. franz-go routes the
// request to each partition's leader.
func listOffsets(ctx context.Context, cl *kgo.Client, partitions map[string][]int32, timestamp int64) (map[string]map[int32]int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	for topic, parts := range partitions {
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		for _, p := range parts {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition = p
			rp.Timestamp = timestamp
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("list offsets: %w", err)
	}
	out := make(map[string]map[int32]int64, len(partitions))
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("list offsets of %s/%d: %w", t.Topic, p.Partition, err)
			}
			if out[t.Topic] == nil {
				out[t.Topic] = make(map[int32]int64)
			}
			out[t.Topic][p.Partition] = p.Offset
		}
	}
	return out, nil
}
