UPDATE kafka_offsets SET next_offset = @to_next, topic_id = @to_topic_id, updated_at = now()
WHERE consumer_group = @group AND topic = @topic AND kafka_partition = @partition
  AND next_offset = @from_next AND topic_id IS NOT DISTINCT FROM @from_topic_id
