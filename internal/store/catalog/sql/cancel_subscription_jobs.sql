UPDATE delivery_jobs SET state = 'canceled', updated_at = @at
WHERE subscription_id = @id AND state = 'pending'
