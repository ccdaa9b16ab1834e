SELECT e.seq, e.tenant_id, e.id, e.event_key, e.type, e.source, coalesce(e.subject, ''), e.schema_version,
    coalesce(e.datacontenttype, ''), coalesce(e.dataschema, ''), coalesce(e.traceparent, ''), coalesce(e.tracestate, ''),
    e.time, e.received_at, e.topic, e.kafka_partition, e.kafka_offset, octet_length(e.payload), e.header_keys, e.header_values, coalesce(e.header_derived, 0), e.payload
FROM events e
WHERE e.tenant_id = @tenant_id AND e.id = @id
