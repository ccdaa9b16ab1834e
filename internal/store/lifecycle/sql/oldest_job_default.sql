-- The creation time of the oldest job, from its id's first 48 bits (Unix
-- milliseconds).
SELECT (SELECT to_timestamp(('x' || substr(replace(id::text, '-', ''), 1, 12))::bit(48)::bigint / 1000.0)
    FROM delivery_jobs_default ORDER BY id LIMIT 1)
