SELECT j.id, j.subscription_id, coalesce(e.id::text, ''), coalesce(e.event_key, ''),
       j.dead_reason, j.attempts, coalesce(j.last_error, ''), j.last_status, j.dead_at
FROM delivery_jobs j
JOIN subscriptions s ON s.id = j.subscription_id
LEFT JOIN events e ON e.seq = j.event_seq
WHERE j.tenant_id = @tenant_id AND j.state = 'dead' AND s.deleted_at IS NULL
    AND (@subscription_id::uuid IS NULL OR j.subscription_id = @subscription_id)
    AND (@reason::text = '' OR j.dead_reason = @reason)
    AND (@since::timestamptz IS NULL OR j.dead_at >= @since)
    AND (@until::timestamptz IS NULL OR j.dead_at < @until)
    AND (@ids::uuid[] IS NULL OR j.id = ANY (@ids))
  AND (@after_at::timestamptz IS NULL OR j.dead_at < @after_at OR (j.dead_at = @after_at AND j.id > @after_id))
ORDER BY j.dead_at DESC, j.id
LIMIT @limit
