INSERT INTO kafka_offsets (consumer_group, topic, kafka_partition, next_offset, topic_id) VALUES (@group, @topic, @partition, 0, @nullable_topic_id)
ON CONFLICT (consumer_group, topic, kafka_partition) DO NOTHING
