SELECT j.id, j.tenant_id, j.subscription_id, j.event_seq, coalesce(e.id::text, ''), coalesce(e.event_key, ''),
    j.state, j.attempts, CASE WHEN j.next_attempt_at < 'infinity' THEN j.next_attempt_at END, coalesce(j.dead_reason, ''), coalesce(j.last_error, ''), j.last_status,
    j.created_at, j.updated_at, j.succeeded_at, j.dead_at, coalesce(j.shed_reason, ''), j.shed_at,
       a.id, a.attempt, a.started_at, a.duration_ms, a.outcome, a.status_code, a.error, a.response_snippet
FROM delivery_jobs j
LEFT JOIN events e ON e.seq = j.event_seq
LEFT JOIN all_delivery_attempts a ON a.job_id = j.id
WHERE j.id = @id AND j.tenant_id = @tenant_id
ORDER BY a.attempt
