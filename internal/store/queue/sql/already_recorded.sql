-- Each attempt looked up on its own, kept apart by OFFSET 0: joined to
-- all_delivery_attempts directly, its start would not prune the attempts'
-- partitions (migration 25), and every attempt would probe the primary key
-- of every day's.
SELECT a.id, a.attempt
FROM unnest(@ids::uuid[], @started::timestamptz[]) AS u (id, started_at)
CROSS JOIN LATERAL (
    SELECT a.id, a.attempt FROM all_delivery_attempts a
    WHERE a.id = u.id AND a.started_at = u.started_at
    OFFSET 0) a
