WITH span AS (
    SELECT id, failing_since FROM subscriptions
    WHERE id = @subscription_id AND span_reported AND failing_since IS NOT NULL AND last_failure_at <= @finished
    FOR UPDATE
)
UPDATE subscriptions s SET failing_since = NULL, last_failure_at = NULL, span_failures = 0, span_reported = false
FROM span
WHERE s.id = span.id
RETURNING s.tenant_id, s.name, span.failing_since
