SELECT job_id, id, attempt, started_at, duration_ms, outcome, status_code, coalesce(error, ''), response_snippet
FROM all_delivery_attempts
WHERE job_id = ANY(@ids)
ORDER BY job_id, attempt
