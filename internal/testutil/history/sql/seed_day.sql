-- One day of history: per_day events from seq base on, 40 ms apart
-- from day_start, each with its id and a succeeded job with its attempt
-- folded into it, as an owned success records it (migration 24).
--
-- An event's id is a UUIDv7 of its time, told apart by g and the tenant, as
-- producers make them (PostgreSQL 15 has no function for it). A job's id
-- is a UUIDv7 of its creation, as ingest makes them, so that each day's
-- jobs live in that day's partition.
WITH ev AS (
    INSERT INTO events (seq, tenant_id, id, event_key, schema_version, schema_major, source, type, time,
                        header_keys, header_values, payload, topic, kafka_partition, kafka_offset, received_at)
    SELECT @base::bigint + g, @tenant,
           (lpad(to_hex(floor(extract(epoch FROM @day_start::timestamptz + g * interval '40 ms') * 1000)::bigint), 12, '0')
            || '7' || substr(md5(g::text || @tenant), 1, 3) || '8' || substr(md5(g::text || @tenant), 4, 15))::uuid,
           'transaction.posted', '1.0', 1, 'midaz',
           'studio.lerian.transaction.posted', @day_start::timestamptz + g * interval '40 ms',
           ARRAY['ce-id'::bytea], ARRAY['x'::bytea], convert_to(repeat('x', 1000), 'UTF8'), 'history', 0, g,
           @day_start::timestamptz + g * interval '40 ms'
    FROM generate_series(0, @per_day::int - 1) g
    RETURNING seq, id, received_at),
 ids AS (INSERT INTO event_ids (tenant_id, id, seq) SELECT @tenant, id, seq FROM ev)
INSERT INTO delivery_jobs (id, tenant_id, subscription_id, event_seq, state, attempts, recorded_attempts,
                           last_status, succeeded_at, created_at, updated_at,
                           succeeded_attempt_id, succeeded_attempt, succeeded_started_at, succeeded_duration_ms)
SELECT (lpad(to_hex(floor(extract(epoch FROM received_at) * 1000)::bigint), 12, '0')
        || '7' || substr(md5(seq::text), 1, 3) || '8' || substr(md5(seq::text), 4, 15))::uuid,
       @tenant, @subscription::uuid, seq, 'succeeded', 1, 1, 204, received_at, received_at, received_at,
       gen_random_uuid(), 1, received_at, 12
FROM ev
