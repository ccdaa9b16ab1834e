-- The time of the oldest id, from its first 48 bits (Unix milliseconds).
SELECT (SELECT to_timestamp(('x' || substr(replace(id::text, '-', ''), 1, 12))::bit(48)::bigint / 1000.0)
    FROM event_ids_default ORDER BY id LIMIT 1)
