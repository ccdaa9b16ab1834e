UPDATE delivery_jobs SET next_attempt_at = now(), shed_reason = NULL, shed_at = NULL, updated_at = now()
WHERE subscription_id = @id AND state = 'pending' AND shed_reason = @shed_rate_limited
