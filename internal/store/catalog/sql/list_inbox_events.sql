SELECT e.seq, e.tenant_id, e.id, e.event_key, e.type, e.source, coalesce(e.subject, ''), e.schema_version,
    coalesce(e.datacontenttype, ''), coalesce(e.dataschema, ''), coalesce(e.traceparent, ''), coalesce(e.tracestate, ''),
    e.time, e.received_at, e.topic, e.kafka_partition, e.kafka_offset, octet_length(e.payload)
FROM events e
WHERE e.tenant_id = @tenant
  AND (@before::bigint = 0 OR e.seq < @before)
  AND (@key = '' OR e.event_key = @key)
  AND (@key_prefix = '' OR starts_with(e.event_key, @key_prefix))
  AND (@source = '' OR e.source = @source)
  AND (@subject = '' OR e.subject = @subject)
  AND (@since::timestamptz IS NULL OR e.received_at >= @since)
  AND (@until::timestamptz IS NULL OR e.received_at < @until)
ORDER BY e.seq DESC
LIMIT @limit
