UPDATE subscriptions SET failing_since = @failing_since, last_failure_at = @last_failure_at, span_failures = @span_failures,
    enabled = false, disabled_reason = 'auto_disabled',
    updated_at = greatest(@last_failure_at::timestamptz, updated_at + interval '1 microsecond')
WHERE id = @subscription_id
