SELECT s.name, s.sink_type, j.id, j.tenant_id, j.subscription_id, j.event_seq, coalesce(e.id::text, ''), coalesce(e.event_key, ''),
    j.state, j.attempts, CASE WHEN j.next_attempt_at < 'infinity' THEN j.next_attempt_at END, coalesce(j.dead_reason, ''), coalesce(j.last_error, ''), j.last_status,
    j.created_at, j.updated_at, j.succeeded_at, j.dead_at, coalesce(j.shed_reason, ''), j.shed_at
FROM subscriptions s
JOIN delivery_jobs j ON j.subscription_id = s.id AND j.event_seq = @seq
LEFT JOIN events e ON e.seq = j.event_seq
WHERE s.tenant_id = @tenant AND j.tenant_id = @tenant
ORDER BY s.name, s.id
