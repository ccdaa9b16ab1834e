SELECT tenant_id, count(*), count(*) FILTER (WHERE due), min(next_attempt_at) FILTER (WHERE due)
FROM (
    SELECT tenant_id, next_attempt_at, next_attempt_at <= @now AS due FROM delivery_jobs WHERE state = 'pending'
    UNION ALL
    SELECT tenant_id, NULL, false FROM delivery_jobs WHERE state = 'in_flight'
) live
GROUP BY tenant_id
ORDER BY count(*) DESC, tenant_id
