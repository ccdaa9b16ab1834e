UPDATE kafka_offsets SET next_offset = @next, topic_id = @nullable_topic_id, updated_at = now()
WHERE consumer_group = @group AND topic = @topic AND kafka_partition = @partition
  AND next_offset = @next_6 AND topic_id IS NOT DISTINCT FROM @nullable_topic_id_7
