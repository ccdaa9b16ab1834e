UPDATE subscriptions SET failing_since = @failing_since, last_failure_at = @last_failure_at, span_failures = @span_failures
WHERE id = @subscription_id
