SELECT id, job_id, attempt, started_at, duration_ms, outcome, status_code, error, response_snippet
FROM delivery_attempts
UNION ALL
SELECT succeeded_attempt_id, id, succeeded_attempt, succeeded_started_at, succeeded_duration_ms, 'succeeded', last_status,
       succeeded_error, succeeded_response
FROM delivery_jobs
WHERE succeeded_attempt_id IS NOT NULL
