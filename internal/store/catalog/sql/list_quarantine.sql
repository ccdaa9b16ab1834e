SELECT id, reason, left(detail, @detail_chars), topic, kafka_partition, kafka_offset,
       substring(record_key FROM 1 FOR @field_bytes), coalesce(octet_length(record_key), 0),
       coalesce(cardinality(header_keys), 0),
       ARRAY(SELECT substring(k FROM 1 FOR @field_bytes) FROM unnest(header_keys[1:@headers]) WITH ORDINALITY AS h (k, n) ORDER BY n),
       ARRAY(SELECT octet_length(k)::bigint FROM unnest(header_keys[1:@headers]) WITH ORDINALITY AS h (k, n) ORDER BY n),
       ARRAY(SELECT substring(v FROM 1 FOR @field_bytes) FROM unnest(header_values[1:@headers]) WITH ORDINALITY AS h (v, n) ORDER BY n),
       ARRAY(SELECT octet_length(v)::bigint FROM unnest(header_values[1:@headers]) WITH ORDINALITY AS h (v, n) ORDER BY n),
       substring(value FROM 1 FOR @value_bytes), value_size, value_sha256, value_truncated, received_at
FROM quarantine
WHERE (@after_at::timestamptz IS NULL OR (received_at, id) < (@after_at, @after_id::bigint))
  AND (@reason = '' OR reason = @reason)
  AND (@topic = '' OR topic = @topic)
ORDER BY received_at DESC, id DESC
LIMIT @limit
