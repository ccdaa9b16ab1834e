UPDATE delivery_jobs SET state = 'dead', dead_reason = 'subscription_disabled', dead_at = @finished, updated_at = @finished
WHERE subscription_id = @subscription_id AND state = 'pending'
