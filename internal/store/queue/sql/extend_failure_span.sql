UPDATE subscriptions SET failing_since = @failing_since, last_failure_at = @last_failure_at WHERE id = @subscription_id
