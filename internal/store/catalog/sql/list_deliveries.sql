SELECT j.id, j.tenant_id, j.subscription_id, j.event_seq, coalesce(e.id::text, ''), coalesce(e.event_key, ''),
       j.state, j.attempts, CASE WHEN j.next_attempt_at < 'infinity' THEN j.next_attempt_at END, coalesce(j.dead_reason, ''), coalesce(j.last_error, ''), j.last_status,
       j.created_at, j.updated_at, j.succeeded_at, j.dead_at, coalesce(j.shed_reason, ''), j.shed_at
FROM delivery_jobs j
LEFT JOIN events e ON e.seq = j.event_seq
WHERE j.subscription_id = @subscription_id AND j.tenant_id = @tenant_id
  AND (@before_seq::bigint = 0 OR j.event_seq < @before_seq)
  AND (@below_seq::bigint IS NULL OR j.event_seq < @below_seq)
  AND (@state = '' OR j.state = @state)
  AND (@since::timestamptz IS NULL OR j.created_at >= @since)
  AND (@until::timestamptz IS NULL OR j.created_at < @until)
ORDER BY j.event_seq DESC
LIMIT @limit
