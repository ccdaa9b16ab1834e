package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/google/uuid"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hubctl/hubctl/internal/store/queue"
)

// startSource says where a partition's consumption starts, for logs.
type startSource string

const (
	startAtKafka  startSource = "kafka"    // Kafka's committed offset (or the group's start) is current
	startAtStored startSource = "database" // the stored offset is ahead of Kafka's: its Kafka commit was lost
	// startRecreated: the stored position belongs to an earlier
	// incarnation of the topic; the new one is read from its start.
	startRecreated startSource = "recreated"
	// startTruncated: the stored position lies beyond the end of the same
	// incarnation's log, whose tail the broker lost; new records are
	// written from the log end on, so reading resumes there.
	startTruncated startSource = "truncated"
)

// partitionStart is what is known about an assigned partition when deciding
// where to read it from.
type partitionStart struct {
	kafka     kgo.Offset // Kafka's committed offset, or the group's start offset when none
	stored    queue.StoredOffset
	hasStored bool
	topicID   uuid.UUID // the topic's id now; uuid.Nil when the broker has none
	logStart  int64     // the partition's first offset (only known when stored)
	logEnd    int64     // the partition's high watermark (only known when stored)
	hasBounds bool
}

// startDecision is where to read a partition from, and the stored position
// to write first when the stored one cannot belong to the log as it is.
type startDecision struct {
	offset  kgo.Offset
	source  startSource
	reset   queue.StoredOffset
	doReset bool
}

// decideStart picks where to read a partition from. The database's offset is
// written in the same transaction as the records before it, so when it is
// ahead of Kafka's committed offset, the records between were stored and
// only their Kafka commit was lost: start at the stored offset (docs/concepts.md, Consume-once).
//
// A stored offset says nothing about another incarnation of the topic (it
// was deleted and created again, starting its offsets at 0 under a new id):
// the new one is read from its start, and its stored position starts over,
// otherwise the batch write would take its records for ones already stored.
// Within one incarnation the log end only grows, so a stored offset beyond
// it means the broker lost the log's tail (an unclean stop of a broker that
// had not flushed it): the records from the log end on are new, so reading
// resumes there, and the stored position moves back to it. Without topic
// ids the two cannot be told apart, and the log start is the choice that
// loses nothing.
func decideStart(p partitionStart) startDecision {
	if !p.hasStored {
		return startDecision{offset: p.kafka, source: startAtKafka}
	}
	if !p.stored.SameIncarnation(p.topicID) {
		return startDecision{offset: kgo.NewOffset().AtStart(), source: startRecreated,
			reset: queue.StoredOffset{Next: 0, TopicID: p.topicID}, doReset: true}
	}
	if p.hasBounds && p.stored.Next > p.logEnd {
		if p.stored.TopicID == uuid.Nil || p.topicID == uuid.Nil {
			return startDecision{offset: at(p.logStart), source: startRecreated,
				reset: queue.StoredOffset{Next: p.logStart, TopicID: p.topicID}, doReset: true}
		}
		return startDecision{offset: at(p.logEnd), source: startTruncated,
			reset: queue.StoredOffset{Next: p.logEnd, TopicID: p.topicID}, doReset: true}
	}
	// Kafka reports "no commit" as the group's start offset, a negative
	// sentinel, which every stored offset is ahead of.
	committed := p.kafka.EpochOffset().Offset
	if committed < p.stored.Next {
		return startDecision{offset: at(p.stored.Next), source: startAtStored}
	}
	// Kafka ahead of the database: a restored backup. Kafka's position
	// is the one that does not re-read, unless it lies beyond the log's
	// end too (the broker lost the tail): new records start at the end.
	if p.hasBounds && committed > p.logEnd {
		return startDecision{offset: at(p.logEnd), source: startAtKafka}
	}
	return startDecision{offset: p.kafka, source: startAtKafka}
}

func at(offset int64) kgo.Offset { return kgo.NewOffset().At(offset).WithEpoch(-1) }

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
	for len(assigned) > 0 {
		moved, err := c.adjustFromStored(ctx, assigned, offsets)
		if err != nil {
			return nil, err
		}
		// A partition whose stored position another writer moved while
		// it was decided is decided again from the new one.
		assigned = moved
	}
	return offsets, nil
}

// adjustFromStored decides the start of the given partitions from their
// stored positions, writing the decisions into offsets. It returns the
// partitions whose stored position changed under it before it could reset
// them.
func (c *Consumer) adjustFromStored(ctx context.Context, partitions map[string][]int32, offsets map[string]map[int32]kgo.Offset) (map[string][]int32, error) {
	var stored map[string]map[int32]queue.StoredOffset
	err := c.retry(ctx, "load stored offsets", func(ctx context.Context) (err error) {
		stored, err = c.opts.Queue.LoadOffsets(ctx, c.opts.Kafka.Group, partitions)
		return err
	})
	if err != nil || len(stored) == 0 {
		return nil, err
	}

	withStored := make(map[string][]int32, len(stored))
	for topic, parts := range stored {
		for p := range parts {
			withStored[topic] = append(withStored[topic], p)
		}
	}
	// The stored positions are read before the bounds: a writer storing
	// meanwhile only moves the bounds further, so a stored offset beyond
	// the end read here is beyond the log, not a race.
	var (
		starts, ends map[string]map[int32]int64
		ids          map[string]uuid.UUID
	)
	err = c.retry(ctx, "list partition bounds", func(ctx context.Context) (err error) {
		if ids, err = topicIDs(ctx, c.client, withStored); err != nil {
			return err
		}
		if starts, err = listOffsets(ctx, c.client, withStored, -2); err != nil {
			return err
		}
		ends, err = listOffsets(ctx, c.client, withStored, -1)
		return err
	})
	if err != nil {
		return nil, err
	}

	var changed map[string][]int32
	for topic, parts := range stored {
		for partition, pos := range parts {
			start, hasStart := starts[topic][partition]
			end, hasEnd := ends[topic][partition]
			d := decideStart(partitionStart{
				kafka:     offsets[topic][partition],
				stored:    pos,
				hasStored: true,
				topicID:   ids[topic],
				logStart:  start,
				logEnd:    end,
				hasBounds: hasStart && hasEnd,
			})
			if d.doReset {
				var moved bool
				err := c.retry(ctx, "reset stored offset", func(ctx context.Context) (err error) {
					moved, err = c.opts.Queue.ResetOffset(ctx, c.opts.Kafka.Group, topic, partition, pos, d.reset)
					return err
				})
				if err != nil {
					return nil, err
				}
				if !moved {
					if changed == nil {
						changed = make(map[string][]int32)
					}
					changed[topic] = append(changed[topic], partition)
					continue
				}
			}
			c.logStart(topic, partition, pos, d, offsets[topic][partition], start, end)
			offsets[topic][partition] = d.offset
		}
	}
	return changed, nil
}

// logStart says, once per assignment, why a partition does not start where
// Kafka's committed offset says.
func (c *Consumer) logStart(topic string, partition int32, stored queue.StoredOffset, d startDecision, kafka kgo.Offset, logStart, logEnd int64) {
	log := c.log.With(slog.String("topic", topic), slog.Int("partition", int(partition)),
		slog.Int64("stored_offset", stored.Next))
	switch d.source {
	case startAtStored:
		log.Info("resuming from the stored offset, ahead of Kafka's committed one",
			slog.Int64("kafka_offset", kafka.EpochOffset().Offset))
	case startRecreated:
		c.metrics.repositioned.WithLabelValues(string(startRecreated)).Inc()
		log.Warn("the topic was deleted and created again since the stored offset was written; reading the new topic from its start",
			slog.String("stored_topic_id", idString(stored.TopicID)), slog.String("topic_id", idString(d.reset.TopicID)))
	case startTruncated:
		c.metrics.repositioned.WithLabelValues(string(startTruncated)).Inc()
		log.Warn("stored offset is beyond the end of the partition: the broker lost records it had acknowledged; reading on from the log end, where new records are written",
			slog.Int64("log_start", logStart), slog.Int64("log_end", logEnd))
	}
}

// idString is a topic id for logs; empty when unknown.
func idString(id uuid.UUID) string {
	if id == uuid.Nil {
		return ""
	}
	return id.String()
}

// topicIDs asks the cluster for the current id of each topic; a topic the
// broker gives no id (a broker older than topic ids) is absent.
func topicIDs(ctx context.Context, cl *kgo.Client, partitions map[string][]int32) (map[string]uuid.UUID, error) {
	req := kmsg.NewPtrMetadataRequest()
	for topic := range partitions {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("read topic ids: %w", err)
	}
	out := make(map[string]uuid.UUID, len(resp.Topics))
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, fmt.Errorf("read the id of topic %s: %w", *t.Topic, err)
		}
		if id := uuid.UUID(t.TopicID); id != uuid.Nil {
			out[*t.Topic] = id
		}
	}
	return out, nil
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

// followRecreatedTopics re-subscribes to the topics a poll could not fetch
// because Kafka no longer knows the id the client reads them under: they
// were deleted and created again. franz-go never adopts a new id by itself,
// so without this every fetch of the topic fails from then on. Purging the
// topic drops it from the client; the pattern subscription finds the new
// topic at the next metadata refresh, the group assigns it, and
// adjustStartOffsets positions it. It is called between polls, when no
// batch is in hand: the purge rebalances.
func (c *Consumer) followRecreatedTopics(fetches kgo.Fetches) {
	var topics []string
	fetches.EachError(func(topic string, _ int32, err error) {
		if errors.Is(err, kerr.UnknownTopicID) && c.recreated.mark(topic) {
			topics = append(topics, topic)
		}
	})
	if len(topics) == 0 {
		return
	}
	c.log.Debug("Kafka no longer knows the id these topics are read under; subscribing to them again",
		slog.Any("topics", topics))
	c.client.PurgeTopicsFromClient(topics...)
}

// purgedTopics are the topics followRecreatedTopics dropped from the client
// and the group has not assigned since: polls already under way may still
// report them, and one purge per recreation is enough.
type purgedTopics struct {
	mu     sync.Mutex
	topics map[string]bool
}

// mark records topic as purged; it reports false when it already was.
func (p *purgedTopics) mark(topic string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.topics[topic] {
		return false
	}
	if p.topics == nil {
		p.topics = make(map[string]bool)
	}
	p.topics[topic] = true
	return true
}

// assigned forgets the purges of topics the group assigned again.
func (p *purgedTopics) assigned(partitions map[string][]int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for topic := range partitions {
		delete(p.topics, topic)
	}
}

// followDataLoss moves back the stored position of each partition the
// client reports lost records of while it was reading it: the broker lost
// the log's tail (an unclean leader election, a broker restarted without
// its unflushed writes), and the client resumed below what was stored. The
// records it reads from there may be new ones written where the lost ones
// were; left ahead, the stored offset would have the batch write skip them
// as stored. Records re-read that were stored before are the same events,
// found in the inbox (rule 7).
func (c *Consumer) followDataLoss(ctx context.Context, fetches kgo.Fetches) {
	for _, f := range fetches {
		for _, t := range f.Topics {
			for _, p := range t.Partitions {
				var loss *kgo.ErrDataLoss
				if !errors.As(p.Err, &loss) {
					continue
				}
				c.rewindStored(ctx, t.Topic, p.Partition, uuid.UUID(t.TopicID), loss.ResetTo)
			}
		}
	}
}

// rewindStored moves a partition's stored position back to next, unless it
// is already there or below, or belongs to another incarnation of the topic.
func (c *Consumer) rewindStored(ctx context.Context, topic string, partition int32, topicID uuid.UUID, next int64) {
	err := c.retry(ctx, "rewind stored offset", func(ctx context.Context) error {
		for {
			stored, err := c.opts.Queue.LoadOffsets(ctx, c.opts.Kafka.Group, map[string][]int32{topic: {partition}})
			if err != nil {
				return err
			}
			pos, ok := stored[topic][partition]
			if !ok || pos.Next <= next || !pos.SameIncarnation(topicID) {
				return nil
			}
			moved, err := c.opts.Queue.ResetOffset(ctx, c.opts.Kafka.Group, topic, partition, pos, queue.StoredOffset{Next: next, TopicID: topicID})
			if err != nil {
				return err
			}
			if moved {
				c.metrics.repositioned.WithLabelValues(string(startTruncated)).Inc()
				c.log.Warn("Kafka lost records of the partition that were stored; the stored offset follows the log back so that new records written in their place are read",
					slog.String("topic", topic), slog.Int("partition", int(partition)),
					slog.Int64("stored_offset", pos.Next), slog.Int64("resumed_at", next))
				return nil
			}
		}
	})
	if err != nil {
		c.log.Warn("could not move the stored offset back after Kafka lost records", slog.String("topic", topic),
			slog.Int("partition", int(partition)), slog.Any("error", err))
	}
}
