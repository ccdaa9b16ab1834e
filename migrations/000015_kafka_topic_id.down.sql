ALTER TABLE kafka_offsets DROP COLUMN topic_id;
