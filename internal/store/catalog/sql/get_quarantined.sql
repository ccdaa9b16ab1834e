SELECT id, reason, detail, topic, kafka_partition, kafka_offset,
       record_key, header_keys, header_values, value, received_at,
       value_size, value_sha256, value_truncated
FROM quarantine WHERE id = @id
