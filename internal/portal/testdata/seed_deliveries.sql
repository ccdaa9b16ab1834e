-- @n events of @tenant_id, each with one delivery of @subscription_id:
-- mostly succeeded, every tenth dead, as a busy subscription's history.
WITH ev AS (
    INSERT INTO events (tenant_id, id, event_key, schema_version, schema_major, source, type, time,
                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset)
    SELECT @tenant_id, gen_random_uuid(), 'transaction.posted', '1.0.0', 1, 'midaz', 'studio.lerian.transaction.posted',
           now(), '{}', '{}', '\x7b7d', 'bench', 0, g
    FROM generate_series(1, @n::int) g
    RETURNING seq)
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, attempts, last_status, dead_reason, dead_at, succeeded_at)
SELECT gen_random_uuid(), @tenant_id, @subscription_id, seq,
       CASE WHEN seq % 10 = 0 THEN 'dead' ELSE 'succeeded' END, 1,
       CASE WHEN seq % 10 = 0 THEN 503 ELSE 200 END,
       CASE WHEN seq % 10 = 0 THEN 'exhausted' END,
       CASE WHEN seq % 10 = 0 THEN now() END,
       CASE WHEN seq % 10 <> 0 THEN now() END
FROM ev
