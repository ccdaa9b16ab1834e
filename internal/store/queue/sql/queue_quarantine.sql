INSERT INTO quarantine (reason, detail, topic, kafka_partition, kafka_offset, record_key, header_keys, header_values, value,
                        value_size, value_sha256, value_truncated, received_at)
VALUES (@reason, @detail, @topic, @partition, @offset, @key, @keys, @values, @value, @size, @sha256, @truncated, coalesce(@received_at, now()))
