-- The Kafka topic id of the incarnation a stored offset was written for. A
-- topic deleted and created again keeps its name and starts its offsets at 0
-- under a new id, so a stored offset applies only to the incarnation it was
-- written for (docs/architecture.md, "The database owns the stream
-- position"). NULL: written before ids were kept, or by a broker that has
-- none; the next write of the partition fills it in.
ALTER TABLE kafka_offsets ADD COLUMN topic_id uuid;
