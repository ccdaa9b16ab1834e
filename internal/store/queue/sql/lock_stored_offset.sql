SELECT next_offset, topic_id FROM kafka_offsets WHERE consumer_group = @group AND topic = @topic AND kafka_partition = @partition FOR UPDATE
