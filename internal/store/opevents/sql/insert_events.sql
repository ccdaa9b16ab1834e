INSERT INTO events (seq, tenant_id, id, event_key, schema_version, schema_major, source, type, time, subject, datacontenttype,
    header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
SELECT u.seq, u.tenant_id, u.id, u.event_key, @schema_version, @schema_major, @source, u.type, u.time, u.subject, @datacontenttype,
    '{}', '{}', u.payload, '', -1, -1
FROM unnest(@seqs::bigint[], @tenants::text[], @ids::uuid[], @keys::text[], @types::text[], @times::timestamptz[],
            @subjects::text[], @payloads::bytea[]) AS u (seq, tenant_id, id, event_key, type, time, subject, payload)
