UPDATE kafka_offsets SET next_offset = GREATEST(next_offset, @next_offset), topic_id = coalesce(topic_id, @topic_id), updated_at = now()
WHERE consumer_group = @consumer_group AND topic = @topic AND kafka_partition = @kafka_partition
