SELECT topic, kafka_partition, next_offset, topic_id FROM kafka_offsets
WHERE consumer_group = @group AND topic = ANY(@topics)
