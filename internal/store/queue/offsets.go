package queue

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/store/pg"
)

// StoredOffset is a partition's stored stream position: the next offset to
// read, and the Kafka topic id of the incarnation of the topic it was
// written for. A topic deleted and created again keeps its name but starts
// its offsets at 0 under a new id, so the offset says nothing about another
// incarnation. TopicID is uuid.Nil when unknown: the row was written before
// ids were kept, or the broker has none.
type StoredOffset struct {
	Next    int64
	TopicID uuid.UUID
}

// SameIncarnation reports whether the stored position belongs to the
// incarnation of the topic that id names. Unknown on either side counts as
// the same: without ids there is nothing to tell incarnations apart by.
func (o StoredOffset) SameIncarnation(id uuid.UUID) bool {
	return o.TopicID == uuid.Nil || id == uuid.Nil || o.TopicID == id
}

// storeOffset moves a partition's stored offset to @next_offset. The batch's
// transaction already holds the row (lockAndLoad inserts it when missing
// and locks it), so it only ever moves forward; GREATEST keeps that true
// if it did not. A row without a topic id takes the batch's.
//
//go:embed sql/store_offset.sql
var storeOffset string

// nullableTopicID is id as a query argument: NULL when unknown.
func nullableTopicID(id uuid.UUID) uuid.NullUUID {
	return uuid.NullUUID{UUID: id, Valid: id != uuid.Nil}
}

// LoadOffsets returns the stored positions of group for the given
// partitions; partitions with nothing stored are absent from the result.
func (s *Store) LoadOffsets(ctx context.Context, group string, partitions map[string][]int32) (map[string]map[int32]StoredOffset, error) {
	topics := make([]string, 0, len(partitions))
	for topic := range partitions {
		topics = append(topics, topic)
	}
	rows, err := s.Pool.Query(ctx, loadOffsetsSQL, pgx.StrictNamedArgs{"group": group, "topics": topics})
	if err != nil {
		return nil, pg.Classify(fmt.Errorf("load stored offsets: %w", err))
	}
	wanted := make(map[string]map[int32]bool, len(partitions))
	for topic, parts := range partitions {
		wanted[topic] = make(map[int32]bool, len(parts))
		for _, p := range parts {
			wanted[topic][p] = true
		}
	}
	out := make(map[string]map[int32]StoredOffset)
	var (
		topic     string
		partition int32
		next      int64
		topicID   uuid.NullUUID
	)
	_, err = pgx.ForEachRow(rows, []any{&topic, &partition, &next, &topicID}, func() error {
		if !wanted[topic][partition] {
			return nil
		}
		if out[topic] == nil {
			out[topic] = make(map[int32]StoredOffset)
		}
		out[topic][partition] = StoredOffset{Next: next, TopicID: topicID.UUID}
		return nil
	})
	if err != nil {
		return nil, pg.Classify(fmt.Errorf("load stored offsets: %w", err))
	}
	return out, nil
}

// ResetOffset moves a partition's stored position to to, also backwards,
// provided it is still from: ingest resets a position that cannot belong to
// the partition's log as it is now (the topic was recreated, or the broker
// lost the log's tail), and a writer that stored records after from was read
// is still right. It reports whether it moved the position; false means
// another writer moved it first, and the caller decides again.
func (s *Store) ResetOffset(ctx context.Context, group, topic string, partition int32, from, to StoredOffset) (bool, error) {
	tag, err := s.Pool.Exec(ctx, resetOffsetSQL,
		pgx.StrictNamedArgs{"group": group, "topic": topic, "partition": partition, "to_next": to.Next, "to_topic_id": nullableTopicID(to.TopicID), "from_next": from.Next, "from_topic_id": nullableTopicID(from.TopicID)})
	if err != nil {
		return false, pg.Classify(fmt.Errorf("reset stored offset of %s/%d: %w", topic, partition, err))
	}
	return tag.RowsAffected() == 1, nil
}

//go:embed sql/load_offsets.sql
var loadOffsetsSQL string

//go:embed sql/reset_offset.sql
var resetOffsetSQL string
