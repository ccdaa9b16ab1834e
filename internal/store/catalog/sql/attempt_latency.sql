WITH recent AS MATERIALIZED (
    SELECT j.id, j.created_at, j.succeeded_started_at, j.succeeded_duration_ms
    FROM delivery_jobs j
    WHERE j.subscription_id = @subscription_id AND j.tenant_id = @tenant_id
    ORDER BY j.event_seq DESC
    LIMIT @sample),
sampled AS (
    SELECT count(*) = @sample AND coalesce(bool_and(created_at >= @since), false) AS sampled FROM recent)
SELECT floor(extract(epoch FROM a.started_at - @since::timestamptz) / 3600)::int AS hour,
       count(*),
       percentile_disc(0.5) WITHIN GROUP (ORDER BY a.duration_ms),
       percentile_disc(0.95) WITHIN GROUP (ORDER BY a.duration_ms),
       (SELECT s.sampled FROM sampled s)
FROM recent r
-- Each job's attempt rows by the (job_id, attempt) index: OFFSET 0 keeps the
-- subquery from being flattened into a join the planner could hash over
-- every attempt of the window, whose cost grows with the whole hub. Then
-- the successful attempt folded into the job (migration 24), from the job
-- row the sample holds: all_delivery_attempts (migration 25) would look
-- each sampled job up again by its primary key, a probe more per job.
CROSS JOIN LATERAL (
    (SELECT a.started_at, a.duration_ms
    FROM delivery_attempts a
    WHERE a.job_id = r.id AND a.started_at >= @since AND a.started_at < @until
    OFFSET 0)
    UNION ALL
    SELECT r.succeeded_started_at, r.succeeded_duration_ms
    WHERE r.succeeded_started_at >= @since AND r.succeeded_started_at < @until) a
GROUP BY 1
ORDER BY 1
