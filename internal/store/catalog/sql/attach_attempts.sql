SELECT job_id, id, attempt, started_at, duration_ms, outcome, status_code, coalesce(error, ''), response_snippet
FROM delivery_attempts
WHERE job_id = ANY(@ids)
UNION ALL
-- The successful attempt folded into its job (migration 24), in line with
-- the rows by its number.
SELECT id, succeeded_attempt_id, succeeded_attempt, succeeded_started_at, succeeded_duration_ms, 'succeeded', last_status,
    coalesce(succeeded_error, ''), succeeded_response
FROM delivery_jobs
WHERE id = ANY(@ids) AND succeeded_attempt_id IS NOT NULL
ORDER BY job_id, attempt
