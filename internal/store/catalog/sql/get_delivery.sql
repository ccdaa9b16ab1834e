SELECT j.id, j.tenant_id, j.subscription_id, j.event_seq, coalesce(e.id::text, ''), coalesce(e.event_key, ''),
    j.state, j.attempts, CASE WHEN j.next_attempt_at < 'infinity' THEN j.next_attempt_at END, coalesce(j.dead_reason, ''), coalesce(j.last_error, ''), j.last_status,
    j.created_at, j.updated_at, j.succeeded_at, j.dead_at, coalesce(j.shed_reason, ''), j.shed_at,
       a.id, a.attempt, a.started_at, a.duration_ms, a.outcome, a.status_code, a.error, a.response_snippet
FROM delivery_jobs j
LEFT JOIN events e ON e.seq = j.event_seq
-- The job's attempt rows and the successful attempt folded into it
-- (migration 24), in line by number.
LEFT JOIN LATERAL (
    SELECT a.id, a.attempt, a.started_at, a.duration_ms, a.outcome, a.status_code, a.error, a.response_snippet
    FROM delivery_attempts a
    WHERE a.job_id = j.id
    UNION ALL
    SELECT j.succeeded_attempt_id, j.succeeded_attempt, j.succeeded_started_at, j.succeeded_duration_ms, 'succeeded', j.last_status,
        j.succeeded_error, j.succeeded_response
    WHERE j.succeeded_attempt_id IS NOT NULL
) a ON true
WHERE j.id = @id AND j.tenant_id = @tenant_id
ORDER BY a.attempt
