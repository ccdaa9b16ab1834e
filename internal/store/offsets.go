package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// storeOffset moves a partition's stored offset to $4. The batch's
// transaction already holds the row (lockAndLoad inserts it when missing
// and locks it), so it only ever moves forward; GREATEST keeps that true
// if it did not.
const storeOffset = `
UPDATE kafka_offsets SET next_offset = GREATEST(next_offset, $4), updated_at = now()
WHERE consumer_group = $1 AND topic = $2 AND kafka_partition = $3`

// LoadOffsets returns the stored next offsets of group for the given
// partitions; partitions with nothing stored are absent from the result.
func (s *Store) LoadOffsets(ctx context.Context, group string, partitions map[string][]int32) (map[string]map[int32]int64, error) {
	topics := make([]string, 0, len(partitions))
	for topic := range partitions {
		topics = append(topics, topic)
	}
	rows, err := s.Pool.Query(ctx, `
SELECT topic, kafka_partition, next_offset FROM kafka_offsets
WHERE consumer_group = $1 AND topic = ANY($2)`, group, topics)
	if err != nil {
		return nil, classify(fmt.Errorf("load stored offsets: %w", err))
	}
	wanted := make(map[string]map[int32]bool, len(partitions))
	for topic, parts := range partitions {
		wanted[topic] = make(map[int32]bool, len(parts))
		for _, p := range parts {
			wanted[topic][p] = true
		}
	}
	out := make(map[string]map[int32]int64)
	var topic string
	var partition int32
	var next int64
	_, err = pgx.ForEachRow(rows, []any{&topic, &partition, &next}, func() error {
		if !wanted[topic][partition] {
			return nil
		}
		if out[topic] == nil {
			out[topic] = make(map[int32]int64)
		}
		out[topic][partition] = next
		return nil
	})
	if err != nil {
		return nil, classify(fmt.Errorf("load stored offsets: %w", err))
	}
	return out, nil
}

// ResetOffset overwrites the stored next offset of one partition, also
// backwards. Ingest uses it when the stored offset lies beyond the
// partition's end, which means the topic was deleted and recreated: the
// stored position belongs to a log that no longer exists.
func (s *Store) ResetOffset(ctx context.Context, group, topic string, partition int32, next int64) error {
	_, err := s.Pool.Exec(ctx, `
INSERT INTO kafka_offsets (consumer_group, topic, kafka_partition, next_offset)
VALUES ($1, $2, $3, $4)
ON CONFLICT (consumer_group, topic, kafka_partition)
DO UPDATE SET next_offset = excluded.next_offset, updated_at = now()`, group, topic, partition, next)
	if err != nil {
		return classify(fmt.Errorf("reset stored offset of %s/%d: %w", topic, partition, err))
	}
	return nil
}
