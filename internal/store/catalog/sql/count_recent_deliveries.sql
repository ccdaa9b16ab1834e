SELECT s.id, c.delivered, c.failed, c.dead, coalesce(c.sampled, false)
FROM subscriptions s
CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE r.state = 'succeeded' AND r.created_at >= @since) AS delivered,
           count(*) FILTER (WHERE r.state IN ('pending', 'in_flight') AND r.recorded_attempts > 0 AND r.created_at >= @since) AS failed,
           count(*) FILTER (WHERE r.state = 'dead' AND r.created_at >= @since) AS dead,
           count(*) = @sample AND bool_and(r.created_at >= @since) AS sampled
    FROM (SELECT j.state, j.recorded_attempts, j.created_at
          FROM delivery_jobs j
          WHERE j.subscription_id = s.id
          ORDER BY j.event_seq DESC
          LIMIT @sample) r
) c
WHERE s.id = ANY(@ids) AND s.tenant_id = @tenant_id
