SELECT a.id, a.attempt FROM delivery_attempts a
JOIN unnest(@ids::uuid[], @started::timestamptz[]) AS u (id, started_at) ON a.id = u.id AND a.started_at = u.started_at
UNION ALL
-- A success folded into its job (migration 24), by the partial index on
-- the folded id.
SELECT j.succeeded_attempt_id, j.succeeded_attempt FROM delivery_jobs j
JOIN unnest(@ids::uuid[], @started::timestamptz[]) AS u (id, started_at)
    ON j.succeeded_attempt_id = u.id AND j.succeeded_started_at = u.started_at
