WITH matched AS (
    SELECT j.id FROM delivery_jobs j
    JOIN subscriptions s ON s.id = j.subscription_id
    WHERE j.tenant_id = @tenant_id AND j.state = 'dead' AND s.deleted_at IS NULL
    AND (@subscription_id::uuid IS NULL OR j.subscription_id = @subscription_id)
    AND (@reason::text = '' OR j.dead_reason = @reason)
    AND (@since::timestamptz IS NULL OR j.dead_at >= @since)
    AND (@until::timestamptz IS NULL OR j.dead_at < @until)
    AND (@ids::uuid[] IS NULL OR j.id = ANY (@ids))
    FOR SHARE OF s
), replayed AS (
    UPDATE delivery_jobs j
    SET state = 'pending', attempts = 0, recoveries = 0, next_attempt_at = @now,
        dead_reason = NULL, dead_at = NULL, updated_at = @now
    FROM matched m
    WHERE j.id = m.id AND j.state = 'dead' AND NOT @dry_run::boolean
    RETURNING j.id
)
SELECT (SELECT count(*) FROM matched), (SELECT count(*) FROM replayed)
